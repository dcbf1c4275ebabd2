// Package ccache reads the statistics of `ccache --print-stats` (ccache 4): one counter per
// line, its name and its value separated by a tab.
package ccache

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// maxLine bounds one line: a counter line is a name and a number.
const maxLine = 4 << 10

// Stats are the counters that say what a build got from the cache.
type Stats struct {
	// Hits are the compilations the cache answered (direct and preprocessed hits).
	Hits int64
	// Misses are the compilations that ran the compiler and filled the cache.
	Misses int64
	// Uncacheable are calls ccache could not cache (linking, preprocessing only, unsupported
	// options, failed compilations...).
	Uncacheable int64
	// Files and SizeKiB are the cache's size after the build.
	Files   int64
	SizeKiB int64
	// Counters are every counter read, by name.
	Counters map[string]int64
}

// uncacheable are the counters of calls ccache passed through to the compiler uncached.
var uncacheable = []string{"autoconf_test", "bad_compiler_arguments", "bad_output_file", "called_for_link",
	"called_for_preprocessing", "compile_failed", "compiler_check_failed", "compiler_produced_empty_output",
	"compiler_produced_no_output", "compiler_produced_stdout", "could_not_find_compiler", "could_not_use_modules",
	"could_not_use_precompiled_header", "error_hashing_extra_file", "internal_error", "missing_cache_file",
	"multiple_source_files", "no_input_file", "output_to_stdout", "preprocessor_error",
	"unsupported_code_directive", "unsupported_compiler_option", "unsupported_environment_variable",
	"unsupported_source_language"}

// Parse reads `ccache --print-stats`. Lines that are not "name<TAB>number" are ignored (a
// newer ccache may add some); it fails when no counter of a build (cache_miss,
// direct_cache_hit, preprocessed_cache_hit) is present, or on a read error.
func Parse(r io.Reader) (Stats, error) {
	s := Stats{Counters: map[string]int64{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 256), maxLine)
	for sc.Scan() {
		name, value, ok := strings.Cut(strings.TrimSpace(sc.Text()), "\t")
		if !ok || name == "" || strings.ContainsAny(name, " \t") {
			continue
		}
		n, err := strconv.ParseInt(strings.TrimSpace(value), 10, 64)
		if err != nil || n < 0 {
			continue
		}
		s.Counters[name] = n
	}
	if err := sc.Err(); err != nil {
		return Stats{}, fmt.Errorf("ccache --print-stats: %w", err)
	}
	_, miss := s.Counters["cache_miss"]
	_, direct := s.Counters["direct_cache_hit"]
	_, pre := s.Counters["preprocessed_cache_hit"]
	if !miss && !direct && !pre {
		return Stats{}, fmt.Errorf("ccache --print-stats: no cache_miss or cache hit counter: not the output of ccache 4")
	}
	s.Hits = sat(s.Counters["direct_cache_hit"], s.Counters["preprocessed_cache_hit"])
	s.Misses = s.Counters["cache_miss"]
	for _, name := range uncacheable {
		s.Uncacheable = sat(s.Uncacheable, s.Counters[name])
	}
	s.Files = s.Counters["files_in_cache"]
	s.SizeKiB = s.Counters["cache_size_kibibyte"]
	return s, nil
}

// sat adds two counts without overflowing.
func sat(a, b int64) int64 {
	if a > (1<<63-1)-b {
		return 1<<63 - 1
	}
	return a + b
}
