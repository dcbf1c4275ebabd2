package ccache

import (
	"os"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	f, err := os.Open("testdata/print-stats-4.7.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s, err := Parse(f)
	if err != nil {
		t.Fatal(err)
	}
	// Three compilations of one file: a miss, then two direct hits.
	if s.Hits != 2 || s.Misses != 1 || s.Uncacheable != 0 || s.Files != 2 || s.SizeKiB != 8 {
		t.Errorf("Parse = hits %d misses %d uncacheable %d files %d size %d KiB", s.Hits, s.Misses, s.Uncacheable, s.Files, s.SizeKiB)
	}
}

func TestParseCases(t *testing.T) {
	tests := []struct {
		name, in     string
		hits, misses int64
		uncacheable  int64
		wantErr      bool
	}{
		{name: "hits add up", in: "direct_cache_hit\t5\npreprocessed_cache_hit\t2\ncache_miss\t1\n", hits: 7, misses: 1},
		{name: "uncacheable calls", in: "cache_miss\t3\ncalled_for_link\t2\ncompile_failed\t1\n", misses: 3, uncacheable: 3},
		{name: "unknown and broken lines ignored", in: "new_counter\t9\ncache_miss\tmany\ncache_miss\t4\n  \nnot a counter\n", misses: 4},
		{name: "negative ignored", in: "cache_miss\t-4\ndirect_cache_hit\t1\n", hits: 1},
		{name: "huge counts saturate", in: "direct_cache_hit\t9223372036854775807\npreprocessed_cache_hit\t9\n", hits: 1<<63 - 1},
		{name: "the human summary is not the machine one", in: "Cacheable calls: 3 / 3\n  Hits: 2 / 3\n", wantErr: true},
		{name: "empty", in: "", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Parse(strings.NewReader(tt.in))
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, want error %v", err, tt.wantErr)
			}
			if s.Hits != tt.hits || s.Misses != tt.misses || s.Uncacheable != tt.uncacheable {
				t.Errorf("hits %d misses %d uncacheable %d; want %d %d %d", s.Hits, s.Misses, s.Uncacheable, tt.hits, tt.misses, tt.uncacheable)
			}
		})
	}
}

func TestParseLongLine(t *testing.T) {
	if _, err := Parse(strings.NewReader("cache_miss\t1\n" + strings.Repeat("x", maxLine+10) + "\n")); err == nil {
		t.Error("a line longer than the bound should be an error, not a hang or a huge buffer")
	}
}

func FuzzParse(f *testing.F) {
	data, err := os.ReadFile("testdata/print-stats-4.7.txt")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(string(data))
	f.Add("direct_cache_hit\t9223372036854775807\npreprocessed_cache_hit\t9223372036854775807\n")
	f.Add("cache_miss\t\t\t1\n")
	f.Fuzz(func(t *testing.T, in string) {
		s, err := Parse(strings.NewReader(in))
		if err != nil {
			return
		}
		if s.Hits < 0 || s.Misses < 0 || s.Uncacheable < 0 || s.Files < 0 || s.SizeKiB < 0 {
			t.Fatalf("negative count in %+v", s)
		}
		for name := range s.Counters {
			if !strings.Contains(in, name) {
				t.Fatalf("counter %q not in the input", name)
			}
		}
	})
}
