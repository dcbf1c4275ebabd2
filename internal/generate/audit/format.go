package audit

import (
	"encoding/json"
	"io"
	"path/filepath"
)

// jsonFinding is a finding as --format json writes it.
type jsonFinding struct {
	File       string `json:"file"`
	Line       int    `json:"line"`
	Column     int    `json:"column"`
	Rule       string `json:"rule"`
	Severity   Level  `json:"severity"`
	Confidence Level  `json:"confidence"`
	Message    string `json:"message"`
	Fix        string `json:"fix,omitempty"`
}

// WriteJSON writes the findings as one JSON array (an empty one when there are none).
func WriteJSON(w io.Writer, findings []Finding) error {
	out := make([]jsonFinding, 0, len(findings))
	for _, f := range findings {
		out = append(out, jsonFinding{f.File, f.Line, f.Column, f.Rule, f.Severity, f.Confidence, f.Message, f.Fix})
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

// SARIF 2.1.0, the subset GitHub code scanning reads.
//
// https://docs.github.com/en/code-security/code-scanning/integrating-with-code-scanning/sarif-support-for-code-scanning
type (
	sarifLog struct {
		Schema  string     `json:"$schema"`
		Version string     `json:"version"`
		Runs    []sarifRun `json:"runs"`
	}
	sarifRun struct {
		Tool    sarifTool     `json:"tool"`
		Results []sarifResult `json:"results"`
	}
	sarifTool struct {
		Driver sarifDriver `json:"driver"`
	}
	sarifDriver struct {
		Name           string      `json:"name"`
		InformationURI string      `json:"informationUri"`
		Version        string      `json:"version,omitempty"`
		Rules          []sarifRule `json:"rules"`
	}
	sarifRule struct {
		ID                   string            `json:"id"`
		ShortDescription     sarifText         `json:"shortDescription"`
		HelpURI              string            `json:"helpUri"`
		DefaultConfiguration sarifLevel        `json:"defaultConfiguration"`
		Properties           map[string]string `json:"properties"`
	}
	sarifLevel struct {
		Level string `json:"level"`
	}
	sarifText struct {
		Text string `json:"text"`
	}
	sarifResult struct {
		RuleID     string            `json:"ruleId"`
		RuleIndex  int               `json:"ruleIndex"`
		Level      string            `json:"level"`
		Message    sarifText         `json:"message"`
		Locations  []sarifLocation   `json:"locations"`
		Properties map[string]string `json:"properties"`
	}
	sarifLocation struct {
		PhysicalLocation sarifPhysical `json:"physicalLocation"`
	}
	sarifPhysical struct {
		ArtifactLocation sarifArtifact `json:"artifactLocation"`
		Region           sarifRegion   `json:"region"`
	}
	sarifArtifact struct {
		URI string `json:"uri"`
	}
	sarifRegion struct {
		StartLine   int `json:"startLine"`
		StartColumn int `json:"startColumn"`
	}
)

// sarifLevels maps a severity to SARIF's level.
var sarifLevels = map[Level]string{High: "error", Medium: "warning", Low: "note"}

// WriteSARIF writes the findings as a SARIF 2.1.0 log for GitHub code scanning; version is
// debugflow's.
func WriteSARIF(w io.Writer, findings []Finding, version string) error {
	rules := Rules()
	index := map[string]int{}
	driver := sarifDriver{Name: "debugflow audit", InformationURI: "https://github.com/debugflow/debugflow/blob/main/docs/security.md#the-audit", Version: version}
	for i, r := range rules {
		index[r.Name] = i
		driver.Rules = append(driver.Rules, sarifRule{
			ID: r.Name, ShortDescription: sarifText{r.Description}, HelpURI: r.URL,
			DefaultConfiguration: sarifLevel{sarifLevels[r.Severity]},
			Properties:           map[string]string{"severity": string(r.Severity), "confidence": string(r.Confidence)},
		})
	}
	results := make([]sarifResult, 0, len(findings))
	for _, f := range findings {
		text := f.Message
		if f.Fix != "" {
			text += " (fix: " + f.Fix + ")"
		}
		results = append(results, sarifResult{
			RuleID: f.Rule, RuleIndex: index[f.Rule], Level: sarifLevels[f.Severity], Message: sarifText{text},
			Locations: []sarifLocation{{sarifPhysical{
				ArtifactLocation: sarifArtifact{filepath.ToSlash(f.File)},
				Region:           sarifRegion{f.Line, f.Column},
			}}},
			Properties: map[string]string{"severity": string(f.Severity), "confidence": string(f.Confidence)},
		})
	}
	log := sarifLog{
		Schema:  "https://json.schemastore.org/sarif-2.1.0.json",
		Version: "2.1.0",
		Runs:    []sarifRun{{Tool: sarifTool{driver}, Results: results}},
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(log)
}
