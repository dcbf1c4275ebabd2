package ghrun

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"unicode/utf8"
)

// BadAnswerError is a successful (2xx) API answer whose body is not JSON: a proxy, a captive
// portal or a wrong GITHUB_API_URL answering instead of GitHub. It says what came back (the
// status, the type, the size and how it starts, escaped) instead of Go's decoding error.
type BadAnswerError struct {
	Status      int
	ContentType string // the media type, without parameters; "" when none was sent
	Size        int64
	Head        string // the first bytes, cut at a rune boundary
	Truncated   bool   // Head is not the whole body
	// Null is an answer of JSON null: valid JSON, but none of the objects the API answers
	// with (go-github would leave its result nil, and the caller read through it).
	Null bool
}

func (e *BadAnswerError) Error() string {
	var b strings.Builder
	if e.Null {
		fmt.Fprintf(&b, "GitHub answered null (HTTP %d", e.Status)
		if e.ContentType != "" {
			fmt.Fprintf(&b, ", %s", shown(e.ContentType))
		}
		fmt.Fprintf(&b, "), not the JSON object asked for: a proxy or a wrong %s may be answering instead of GitHub's API", EnvAPIURL)
		return b.String()
	}
	fmt.Fprintf(&b, "GitHub answered with something that is not JSON (HTTP %d", e.Status)
	if e.ContentType != "" {
		fmt.Fprintf(&b, ", %s", shown(e.ContentType))
	}
	fmt.Fprintf(&b, ", %s, starts with %q", formatBytes(e.Size), e.Head)
	if e.Truncated {
		b.WriteString("...")
	}
	fmt.Fprintf(&b, "): a proxy, a captive portal or a wrong %s may be answering instead of GitHub's API", EnvAPIURL)
	return b.String()
}

// badAnswerHead is how much of a bad answer its error quotes.
const badAnswerHead = 48

// jsonGuard reads each successful API answer in full, within apiGuard's bounds (size, idle
// time), and refuses one that is not JSON. A body that breaks off half way is a network error
// here, which the retry transport above retries for a GET, instead of a decoding error after it.
// The quote of a bad answer is cut from the body with the secrets masked first: a server that
// echoes the token must not get a piece of it printed that the whole-token masking of the
// output would not recognise.
type jsonGuard struct {
	base    http.RoundTripper
	secrets *secretSet
}

func (g *jsonGuard) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := g.base.RoundTrip(req)
	if err != nil || resp.StatusCode < 200 || resp.StatusCode > 299 || resp.StatusCode == http.StatusNoContent ||
		req.Method == http.MethodHead || resp.Body == nil {
		return resp, err
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	trimmed := bytes.TrimSpace(body)
	if string(trimmed) == "null" {
		ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
		return nil, &BadAnswerError{Status: resp.StatusCode, ContentType: ct, Size: int64(len(body)), Head: "null", Null: true}
	}
	if len(trimmed) == 0 || json.Valid(body) {
		return resp, nil
	}
	head, cut := []byte(redact(string(body), g.secrets.all())), false
	if len(head) > badAnswerHead {
		head, cut = head[:badAnswerHead], true
		for len(head) > 0 && !utf8.Valid(head) {
			head = head[:len(head)-1]
		}
	}
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	return nil, &BadAnswerError{Status: resp.StatusCode, ContentType: ct, Size: int64(len(body)), Head: string(head), Truncated: cut}
}

// badAnswer reports an answer that another attempt would not mend: not JSON, too large, or from
// a server whose certificate is not trusted (a wrong GITHUB_API_URL, a proxy intercepting TLS):
// neither retried nor waited out as an outage, and never exit 75.
func badAnswer(err error) bool {
	var bad *BadAnswerError
	var cert *tls.CertificateVerificationError
	var unknown x509.UnknownAuthorityError
	var name x509.HostnameError
	var invalid x509.CertificateInvalidError
	return errors.As(err, &bad) || errors.Is(err, errAPIBodyTooLarge) ||
		errors.As(err, &cert) || errors.As(err, &unknown) || errors.As(err, &name) || errors.As(err, &invalid)
}
