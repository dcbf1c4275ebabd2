package stepflag

import (
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
)

type inner struct {
	Python string `flag:"python" default:"python3" emit:"always" usage:"interpreter"`
	Select string `flag:"select" short:"k" usage:"-k expression"`
}

type opts struct {
	Out string `flag:"out" default:"/tmp/repro" emit:"always" usage:"folder"`
	inner
	Count   int           `flag:"count" default:"50" usage:"repetitions"`
	Stop    bool          `flag:"stop" usage:"stop early"`
	On      bool          `flag:"on" default:"true" usage:"on by default"`
	Grace   time.Duration `flag:"grace" default:"10s" usage:"delay"`
	Ratio   float64       `flag:"ratio" default:"0.5" usage:"odds ratio"`
	Tools   []string      `flag:"tool" default:"memcheck" usage:"tools"`
	Code    string        `flag:"code" usage:"code"`
	Lines   []string      `flag:"line" usage:"lines"`
	Dir     string        `flag:"-"`
	Callbak func()        `flag:"-"`
}

func TestArgsWritesWhatDiffersInDeclarationOrder(t *testing.T) {
	o := Defaults[opts]()
	if o.Count != 50 || o.Grace != 10*time.Second || o.Ratio != 0.5 || !slices.Equal(o.Tools, []string{"memcheck"}) || !o.On {
		t.Fatalf("Defaults = %+v", o)
	}
	o.Select, o.Stop, o.On, o.Grace, o.Ratio = "cuda and not slow", true, false, 4*time.Minute, 0.95
	o.Tools = []string{"racecheck", "initcheck"}
	o.Lines = []string{"a", "b"}
	o.Code = "echo ${{ x }}"
	args, err := Args(&o, WithShell(&o.Out, `"$OUT"`), WithExpr(&o.Count, "COUNT", "${{ inputs.count }}"),
		AsCode(&o.Lines, "LINES", "build.iterate"), Omit(&o.Code))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, a := range args {
		got = append(got, strings.Join([]string{a.Flag, a.Value, a.Env}, "|"))
	}
	want := []string{
		`--out|"$OUT"|DEBUGFLOW_OUT`,
		"--python|python3|DEBUGFLOW_PYTHON",
		"-k|cuda and not slow|DEBUGFLOW_SELECT",
		"--count|${{ inputs.count }}|COUNT",
		"--stop||DEBUGFLOW_STOP",
		"--on|false|DEBUGFLOW_ON",
		"--grace|4m|DEBUGFLOW_GRACE",
		"--ratio|0.95|DEBUGFLOW_RATIO",
		"--tool|racecheck|DEBUGFLOW_TOOL",
		"--tool|initcheck|DEBUGFLOW_TOOL",
		"--line|a\nb|LINES",
	}
	if !slices.Equal(got, want) {
		t.Errorf("Args:\n got %q\nwant %q", got, want)
	}
	if args[len(args)-1].Kind != Code || args[len(args)-1].Path != "build.iterate" || args[3].Kind != Expr || args[0].Kind != Shell {
		t.Errorf("kinds: %+v", args)
	}
}

func TestArgvParsesBack(t *testing.T) {
	o := Defaults[opts]()
	o.Select, o.On, o.Count, o.Ratio = "-x", false, 7, -0.125
	o.Lines = []string{"--weird", "two words"}
	args, err := Args(&o)
	if err != nil {
		t.Fatal(err)
	}
	argv := Argv(args)
	var back opts
	fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
	MustRegister(fs, &back)
	if err := fs.Parse(argv); err != nil {
		t.Fatalf("%q: %v", argv, err)
	}
	if !reflect.DeepEqual(back, o) {
		t.Errorf("%q parsed back to %+v, want %+v", argv, back, o)
	}
}

func TestFieldsNamesTheBadField(t *testing.T) {
	type untagged struct {
		Out  string `flag:"out" usage:"x"`
		Oops int
	}
	type dup struct {
		A string `flag:"a" usage:"x"`
		B string `flag:"a" usage:"y"`
	}
	type badDefault struct {
		N int `flag:"n" default:"many" usage:"x"`
	}
	type noUsage struct {
		N int `flag:"n"`
	}
	type badType struct {
		F complex128 `flag:"f" usage:"x"`
	}
	for _, tt := range []struct {
		v    any
		want string
	}{
		{untagged{}, "field Oops has no flag tag"},
		{dup{}, "flag --a is already field A"},
		{badDefault{}, `field N: default "many"`},
		{noUsage{}, "has no usage tag"},
		{badType{}, "complex128 is not supported"},
	} {
		_, err := Fields(reflect.TypeOf(tt.v))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%T: %v, want %q", tt.v, err, tt.want)
		}
	}
}

func TestOverrideOfAnotherStructFails(t *testing.T) {
	var o, other opts
	if _, err := Args(&o, Keep(&other.Count)); err == nil {
		t.Error("an override of a field of another value was accepted")
	}
	if _, err := Args(o); err == nil {
		t.Error("a struct value (not a pointer) was accepted")
	}
	if name, err := FlagOf(&o, &o.Select); err != nil || name != "-k" {
		t.Errorf("FlagOf select = %q, %v", name, err)
	}
}

func TestFormatDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		0: "0s", 4 * time.Minute: "4m", 60 * time.Minute: "60m", 90 * time.Second: "90s", 1500 * time.Millisecond: "1.5s",
	} {
		if got := FormatDuration(d); got != want {
			t.Errorf("FormatDuration(%v) = %q, want %q", d, got, want)
		}
		if back, err := time.ParseDuration(FormatDuration(d)); err != nil || back != d {
			t.Errorf("%q parses to %v, %v", FormatDuration(d), back, err)
		}
	}
}

// TestUsageNamesTheValue: a backquoted word of the usage is the value's name in the help
// (--baseline DIR), as pflag reads it, and the usage keeps it for the reference tables.
func TestUsageNamesTheValue(t *testing.T) {
	type named struct {
		Base string "flag:\"baseline\" usage:\"the baseline `DIR` of the experiment\""
	}
	var o named
	fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
	MustRegister(fs, &o)
	name, usage := pflag.UnquoteUsage(fs.Lookup("baseline"))
	if name != "DIR" || usage != "the baseline DIR of the experiment" {
		t.Errorf("UnquoteUsage = %q, %q", name, usage)
	}
	if f, err := Fields(reflect.TypeOf(o)); err != nil || f[0].Usage != "the baseline `DIR` of the experiment" {
		t.Errorf("Fields = %+v, %v", f, err)
	}
}
