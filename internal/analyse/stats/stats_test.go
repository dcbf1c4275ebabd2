package stats

import (
	"math"
	"testing"
)

// close reports whether got matches want to rel relative error (or abs 1e-15 near zero).
func closeTo(got, want, rel float64) bool {
	if want == 0 {
		return math.Abs(got) < 1e-15
	}
	return math.Abs(got-want) <= rel*math.Abs(want)
}

// The reference intervals are R 4.x's binom.test(x, n)$conf.int; 682/925 is the example in
// R's ?binom.test (Mendel's peas), printed as 0.7076683 0.7654066.
func TestClopperPearsonMatchesR(t *testing.T) {
	tests := []struct {
		x, n   int
		lo, hi float64
	}{
		{682, 925, 0.7076683, 0.7654066},
		{0, 10, 0, 0.3084971},
		{10, 10, 0.6915029, 1},
		{5, 10, 0.1870860, 0.8129140},
		{1, 10, 0.002528579, 0.4450161},
		{0, 1, 0, 0.975},
		{1, 1, 0.025, 1},
	}
	for _, tt := range tests {
		iv, err := ClopperPearson(tt.x, tt.n, 0.95)
		if err != nil {
			t.Fatal(err)
		}
		if !closeTo(iv.Lo, tt.lo, 5e-7) || !closeTo(iv.Hi, tt.hi, 5e-7) {
			t.Errorf("ClopperPearson(%d, %d) = [%.9g, %.9g], R gives [%.7g, %.7g]", tt.x, tt.n, iv.Lo, iv.Hi, tt.lo, tt.hi)
		}
	}
}

// The interval's ends are defined by binomial tails: at the upper end, P(X <= x) = 2.5%; at
// the lower end, P(X >= x) = 2.5%. Check that definition directly with a binomial sum for
// many (x, n), including a million trials.
func TestClopperPearsonTailDefinition(t *testing.T) {
	binomCDF := func(x, n int, p float64) float64 { // P(X <= x)
		var s float64
		for k := 0; k <= x; k++ {
			s += math.Exp(logChoose(n, k) + float64(k)*math.Log(p) + float64(n-k)*math.Log1p(-p))
		}
		return s
	}
	for _, c := range [][2]int{{1, 3}, {2, 20}, {7, 50}, {13, 200}, {99, 1000}, {3, 1000000}} {
		x, n := c[0], c[1]
		iv, err := ClopperPearson(x, n, 0.95)
		if err != nil {
			t.Fatal(err)
		}
		if got := binomCDF(x, n, iv.Hi); !closeTo(got, 0.025, 1e-6) {
			t.Errorf("%d/%d: P(X <= x | p = hi %.6g) = %.9f, want 0.025", x, n, iv.Hi, got)
		}
		if got := 1 - binomCDF(x-1, n, iv.Lo); !closeTo(got, 0.025, 1e-6) {
			t.Errorf("%d/%d: P(X >= x | p = lo %.6g) = %.9f, want 0.025", x, n, iv.Lo, got)
		}
	}
}

func TestClopperPearsonEdges(t *testing.T) {
	iv, err := ClopperPearson(0, 0, 0.95)
	if err != nil || iv != (Interval{0, 1}) {
		t.Errorf("0/0 = %v, %v; want [0, 1]", iv, err)
	}
	// 0/n: the upper end is 1 - 0.025^(1/n), 1/n... close to 3.69/n.
	iv, _ = ClopperPearson(0, 1000, 0.95)
	if want := 1 - math.Pow(0.025, 1.0/1000); iv.Lo != 0 || !closeTo(iv.Hi, want, 1e-12) {
		t.Errorf("0/1000 = %v, want [0, %v]", iv, want)
	}
	iv, _ = ClopperPearson(1000, 1000, 0.95)
	if want := math.Pow(0.025, 1.0/1000); iv.Hi != 1 || !closeTo(iv.Lo, want, 1e-12) {
		t.Errorf("1000/1000 = %v, want [%v, 1]", iv, want)
	}
	for _, bad := range [][2]int{{-1, 5}, {6, 5}, {0, -1}} {
		if _, err := ClopperPearson(bad[0], bad[1], 0.95); err == nil {
			t.Errorf("ClopperPearson(%d, %d) accepted", bad[0], bad[1])
		}
	}
	for _, c := range []float64{0, 1, -0.5, 1.5, math.NaN()} {
		if _, err := ClopperPearson(1, 5, c); err == nil {
			t.Errorf("confidence %v accepted", c)
		}
	}
}

func TestUpperBoundRuleOfThree(t *testing.T) {
	// Zero failures: 1-0.05^(1/n), which the rule of three approximates by 3/n.
	for _, n := range []int{30, 100, 1000} {
		got, err := UpperBound(0, n, 0.95)
		if err != nil {
			t.Fatal(err)
		}
		if want := 1 - math.Pow(0.05, 1/float64(n)); !closeTo(got, want, 1e-12) {
			t.Errorf("UpperBound(0, %d) = %v, want %v", n, got, want)
		}
		if r3 := 3 / float64(n); math.Abs(got-r3)/r3 > 0.05 {
			t.Errorf("UpperBound(0, %d) = %v, not within 5%% of the rule of three %v", n, got, r3)
		}
	}
	// One-sided 95% upper bound equals the two-sided 90% interval's upper end.
	got, _ := UpperBound(5, 10, 0.95)
	iv, _ := ClopperPearson(5, 10, 0.90)
	if !closeTo(got, iv.Hi, 1e-9) {
		t.Errorf("UpperBound(5, 10, 0.95) = %v, two-sided 90%% upper end %v", got, iv.Hi)
	}
	if got, _ := UpperBound(10, 10, 0.95); got != 1 {
		t.Errorf("UpperBound(10, 10) = %v, want 1", got)
	}
}

func TestZeroFailureTrials(t *testing.T) {
	tests := []struct {
		rate float64
		conf float64
		want int
	}{
		{0.1, 0.95, 29},   // ln 0.05 / ln 0.9 = 28.4
		{0.01, 0.95, 299}, // rule of three: 300
		{0.2, 0.99, 21},   // ln 0.01 / ln 0.8 = 20.6
		{1, 0.95, 1},
	}
	for _, tt := range tests {
		got, err := ZeroFailureTrials(tt.rate, tt.conf)
		if err != nil || got != tt.want {
			t.Errorf("ZeroFailureTrials(%v, %v) = %d, %v; want %d", tt.rate, tt.conf, got, err, tt.want)
		}
		// At that n the bound is below the rate, at n-1 it is not.
		if tt.rate < 1 {
			if ub, _ := UpperBound(0, got, tt.conf); ub > tt.rate {
				t.Errorf("bound after %d clean trials %v > %v", got, ub, tt.rate)
			}
			if ub, _ := UpperBound(0, got-1, tt.conf); ub <= tt.rate {
				t.Errorf("bound after %d clean trials %v already <= %v", got-1, ub, tt.rate)
			}
		}
	}
	if _, err := ZeroFailureTrials(0, 0.95); err == nil {
		t.Error("rate 0 accepted")
	}
}

func TestRegIncBetaClosedForms(t *testing.T) {
	for _, x := range []float64{1e-9, 0.01, 0.3, 0.5, 0.77, 0.999} {
		for _, b := range []float64{0.5, 1, 3, 40} {
			// I_x(1, b) = 1 - (1-x)^b and I_x(b, 1) = x^b.
			if got, want := RegIncBeta(1, b, x), -math.Expm1(b*math.Log1p(-x)); !closeTo(got, want, 1e-12) {
				t.Errorf("I_%v(1, %v) = %v, want %v", x, b, got, want)
			}
			if got, want := RegIncBeta(b, 1, x), math.Pow(x, b); !closeTo(got, want, 1e-12) {
				t.Errorf("I_%v(%v, 1) = %v, want %v", x, b, got, want)
			}
		}
	}
	for _, a := range []float64{0.5, 2, 17, 2500} {
		if got := RegIncBeta(a, a, 0.5); !closeTo(got, 0.5, 1e-10) {
			t.Errorf("I_0.5(%v, %v) = %v, want 0.5 by symmetry", a, a, got)
		}
	}
	if !math.IsNaN(RegIncBeta(0, 1, 0.5)) || RegIncBeta(2, 3, -1) != 0 || RegIncBeta(2, 3, 2) != 1 {
		t.Error("edge values of RegIncBeta")
	}
}

func TestBetaQuantileInverts(t *testing.T) {
	for _, ab := range [][2]float64{{1, 1}, {2, 5}, {0.5, 0.5}, {30, 970}, {1, 1e6}} {
		for _, p := range []float64{1e-6, 0.025, 0.5, 0.975} {
			x := BetaQuantile(p, ab[0], ab[1])
			if got := RegIncBeta(ab[0], ab[1], x); !closeTo(got, p, 1e-9) {
				t.Errorf("I(BetaQuantile(%v; %v, %v) = %v) = %v", p, ab[0], ab[1], x, got)
			}
		}
	}
}

// R's ?fisher.test examples: the tea-tasting table with alternative "greater" prints
// p-value = 0.2429 (17/70), the convictions table with alternative "less" 0.0004652.
// Wikipedia's worked example (1 of 10 studying men, 11 of 14 others... dieting) has table
// probability 0.001346; its one-sided p adds the one more extreme table, 0.001380.
func TestFisherMatchesPublishedExamples(t *testing.T) {
	tests := []struct {
		name       string
		cand, base Counts
		alt        Alternative
		want, rel  float64
	}{
		{"R TeaTasting greater", Counts{3, 4}, Counts{1, 4}, Greater, 17.0 / 70, 1e-12},
		{"R Convictions less", Counts{2, 17}, Counts{10, 13}, Less, 0.0004652, 1e-4},
		{"Wikipedia dieting less", Counts{1, 10}, Counts{11, 14}, Less, 0.0013797280926100388, 1e-10},
	}
	for _, tt := range tests {
		got, err := Fisher(tt.cand, tt.base, 1, tt.alt)
		if err != nil {
			t.Fatal(err)
		}
		if !closeTo(got, tt.want, tt.rel) {
			t.Errorf("%s: p = %v, want %v", tt.name, got, tt.want)
		}
	}
}

// Exact values from rational arithmetic (Python's fractions over the noncentral
// hypergeometric weights C(n1,k) C(n2,t-k) psi^k), including odds ratios other than 1, the
// margins of R's fisher.test(or = psi).
func TestFisherExactRational(t *testing.T) {
	tests := []struct {
		cand, base Counts
		or         float64
		alt        Alternative
		want       float64
	}{
		{Counts{0, 50}, Counts{10, 50}, 0.5, Less, 0.011088901001215573},
		{Counts{0, 30}, Counts{6, 30}, 0.5, Less, 0.06856477301653868},
		{Counts{9, 50}, Counts{10, 50}, 0.5, Greater, 0.19334374484608371},
		{Counts{40, 200}, Counts{38, 200}, 0.5, Greater, 0.002044760642635338},
		{Counts{3, 40}, Counts{12, 40}, 1, Less, 0.009878513379223347},
		{Counts{15, 60}, Counts{5, 60}, 1, Greater, 0.012846596464909328},
		{Counts{0, 100}, Counts{0, 100}, 1, Less, 1},
		{Counts{100, 100}, Counts{100, 100}, 1, Less, 1},
		{Counts{7, 7}, Counts{0, 9}, 2, Greater, 0.0010451709834405722},
	}
	for _, tt := range tests {
		got, err := Fisher(tt.cand, tt.base, tt.or, tt.alt)
		if err != nil {
			t.Fatal(err)
		}
		if !closeTo(got, tt.want, 1e-10) {
			t.Errorf("Fisher(%v, %v, or=%v, %v) = %.17g, want %.17g", tt.cand, tt.base, tt.or, tt.alt, got, tt.want)
		}
	}
}

func TestFisherLargeCountsAndErrors(t *testing.T) {
	// A million trials per arm: no overflow, and a clear difference is significant.
	p, err := Fisher(Counts{900, 1_000_000}, Counts{1100, 1_000_000}, 1, Less)
	if err != nil || !(p > 0 && p < 1e-4) {
		t.Errorf("large counts: p = %v, %v", p, err)
	}
	// The two tails overlap at the observed table, so they add to 1 + P(X = x).
	less, _ := Fisher(Counts{4, 30}, Counts{9, 30}, 1, Less)
	greater, _ := Fisher(Counts{4, 30}, Counts{9, 30}, 1, Greater)
	if less+greater <= 1 {
		t.Errorf("tails %v + %v <= 1", less, greater)
	}
	for _, bad := range []struct {
		c, b Counts
		or   float64
	}{{Counts{5, 4}, Counts{1, 4}, 1}, {Counts{1, 4}, Counts{-1, 4}, 1}, {Counts{1, 4}, Counts{1, 4}, 0}, {Counts{1, 4}, Counts{1, 4}, math.Inf(1)}} {
		if _, err := Fisher(bad.c, bad.b, bad.or, Less); err == nil {
			t.Errorf("Fisher(%v, %v, %v) accepted", bad.c, bad.b, bad.or)
		}
	}
}

func TestOddsRatioAndRate(t *testing.T) {
	if got := OddsRatio(Counts{10, 50}, Counts{20, 50}); !closeTo(got, (10.0/40)/(20.0/30), 1e-12) {
		t.Errorf("OddsRatio = %v", got)
	}
	if got := OddsRatio(Counts{1, 10}, Counts{0, 10}); !math.IsInf(got, 1) {
		t.Errorf("OddsRatio vs a clean baseline = %v, want +Inf", got)
	}
	// Halving the odds of a 20% rate gives 1/9: odds 0.25 -> 0.125.
	if got := RateAtOddsRatio(0.2, 0.5); !closeTo(got, 1.0/9, 1e-12) {
		t.Errorf("RateAtOddsRatio(0.2, 0.5) = %v, want 1/9", got)
	}
	if RateAtOddsRatio(0, 0.5) != 0 || RateAtOddsRatio(1, 0.5) != 1 {
		t.Error("RateAtOddsRatio at 0 and 1")
	}
	if (Counts{}).Rate() != 0 || (Counts{1, 4}).Rate() != 0.25 {
		t.Error("Counts.Rate")
	}
}

// R's ?power.prop.test example: power.prop.test(p1 = .50, p2 = .75, power = .90) gives
// n = 76.7 (two-sided 5%, that is one-sided 2.5%); the continuity correction of Fleiss, Tytun
// and Ury brings it to 84.5.
func TestSampleSize(t *testing.T) {
	if got := sampleSizeUncorrected(0.5, 0.75, 0.025, 0.9); math.Abs(got-76.7) > 0.05 {
		t.Errorf("uncorrected n = %v, R gives 76.7", got)
	}
	n, err := SampleSize(0.5, 0.75, 0.025, 0.9)
	if err != nil || n != 85 {
		t.Errorf("SampleSize = %d, %v; want 85", n, err)
	}
	// Symmetric in the two rates, and larger for a smaller difference.
	a, _ := SampleSize(0.2, 0.1, 0.05, 0.8)
	b, _ := SampleSize(0.1, 0.2, 0.05, 0.8)
	c, _ := SampleSize(0.2, 0.15, 0.05, 0.8)
	if a != b || c <= a {
		t.Errorf("SampleSize(0.2, 0.1) = %d, (0.1, 0.2) = %d, (0.2, 0.15) = %d", a, b, c)
	}
	for _, bad := range [][4]float64{{0.2, 0.2, 0.05, 0.8}, {-0.1, 0.2, 0.05, 0.8}, {0.2, 0.1, 0, 0.8}, {0.2, 0.1, 0.05, 1}} {
		if _, err := SampleSize(bad[0], bad[1], bad[2], bad[3]); err == nil {
			t.Errorf("SampleSize%v accepted", bad)
		}
	}
}

// Pocock (1977), Table 1 (also Jennison and Turnbull, "Group Sequential Methods", Table 2.1):
// the constant of a two-sided 5% test with symmetric boundaries, which to three decimals is
// the one-sided 2.5% constant.
func TestPocockConstantMatchesTable(t *testing.T) {
	table := map[int]float64{1: 1.960, 2: 2.178, 3: 2.289, 4: 2.361, 5: 2.413, 10: 2.555, 15: 2.626, 20: 2.672}
	for k, want := range table {
		got, err := PocockConstant(k, 0.025)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(got-want) > 0.0015 {
			t.Errorf("PocockConstant(%d, 0.025) = %.4f, Pocock's table %.3f", k, got, want)
		}
	}
}

func TestPocockLevel(t *testing.T) {
	if l, err := PocockLevel(1, 0.05); err != nil || l != 0.05 {
		t.Errorf("one look: %v, %v", l, err)
	}
	prev := 0.05
	for _, k := range []int{2, 4, 8, 16} {
		l, err := PocockLevel(k, 0.05)
		if err != nil {
			t.Fatal(err)
		}
		// More looks, a stricter level, but never as strict as Bonferroni.
		if !(l < prev && l > 0.05/float64(k)) {
			t.Errorf("PocockLevel(%d) = %v (previous %v, Bonferroni %v)", k, l, prev, 0.05/float64(k))
		}
		prev = l
	}
	if _, err := PocockConstant(0, 0.05); err == nil {
		t.Error("0 looks accepted")
	}
	if _, err := PocockConstant(3, 0.7); err == nil {
		t.Error("alpha 0.7 accepted")
	}
}

func BenchmarkFisher(b *testing.B) {
	for b.Loop() {
		Fisher(Counts{180, 1000}, Counts{205, 1000}, 0.5, Greater)
	}
}

func BenchmarkClopperPearson(b *testing.B) {
	for b.Loop() {
		ClopperPearson(37, 400, 0.95)
	}
}

// LogBeta against closed forms: B(1, 1) = 1, B(2, 3) = 1/12, B(1/2, 1/2) = pi,
// B(a, 1) = 1/a, and the integral of theta^x (1-theta)^(n-x) for large counts by the
// recurrence B(a+1, b) = B(a, b) a/(a+b).
func TestLogBeta(t *testing.T) {
	tests := []struct{ a, b, want float64 }{
		{1, 1, 0},
		{2, 3, math.Log(1.0 / 12)},
		{0.5, 0.5, math.Log(math.Pi)},
		{7, 1, math.Log(1.0 / 7)},
		{1, 1e6, math.Log(1e-6)},
	}
	for _, tt := range tests {
		if got := LogBeta(tt.a, tt.b); !closeTo(got, tt.want, 1e-12) && math.Abs(got-tt.want) > 1e-12 {
			t.Errorf("LogBeta(%v, %v) = %v, want %v", tt.a, tt.b, got, tt.want)
		}
	}
	// B(a+1, b) = B(a, b) * a / (a+b), walked up to a = 5001.
	a, b := 1.0, 3000.5
	want := LogBeta(a, b)
	for ; a < 5001; a++ {
		want += math.Log(a / (a + b))
	}
	if got := LogBeta(a, b); !closeTo(got, want, 1e-10) {
		t.Errorf("LogBeta(%v, %v) = %v, the recurrence gives %v", a, b, got, want)
	}
	for _, bad := range [][2]float64{{0, 1}, {1, -1}, {math.NaN(), 1}} {
		if got := LogBeta(bad[0], bad[1]); !math.IsNaN(got) {
			t.Errorf("LogBeta(%v, %v) = %v, want NaN", bad[0], bad[1], got)
		}
	}
}
