package stats

import (
	"math"
	"testing"
)

// binomPMF is Binomial(n, p)'s probability of x, from log-gamma.
func binomPMF(n, x int, p float64) float64 {
	switch {
	case p <= 0:
		if x == 0 {
			return 1
		}
		return 0
	case p >= 1:
		if x == n {
			return 1
		}
		return 0
	}
	return math.Exp(logChoose(n, x) + float64(x)*math.Log(p) + float64(n-x)*math.Log1p(-p))
}

// The test's size, computed exactly by enumerating every table: for true rates on the
// null's boundary (pc = pb + diff, where a wrong rejection is likeliest), the chance that the
// p-value is at most alpha never exceeds alpha, for either direction and margins of both
// signs. And it has power: at equal rates it rejects a 20-point margin most of the time.
func TestDifferenceTestSizeIsExact(t *testing.T) {
	for _, tc := range []struct {
		nc, nb int
		diff   float64
		alt    Alternative
	}{
		{30, 30, 0.2, Less}, {40, 25, 0.1, Less}, {30, 30, -0.2, Greater}, {25, 40, 0.15, Less}, {40, 40, -0.1, Greater},
	} {
		pvals := make([][]float64, tc.nc+1)
		for i := range pvals {
			pvals[i] = make([]float64, tc.nb+1)
			for j := range pvals[i] {
				p, err := DifferenceTest(Counts{i, tc.nc}, Counts{j, tc.nb}, tc.diff, tc.alt)
				if err != nil {
					t.Fatal(err)
				}
				pvals[i][j] = p
			}
		}
		size := func(pb, pc, alpha float64) float64 {
			var s float64
			for i := range pvals {
				for j := range pvals[i] {
					if pvals[i][j] <= alpha {
						s += binomPMF(tc.nc, i, pc) * binomPMF(tc.nb, j, pb)
					}
				}
			}
			return s
		}
		lo, hi := math.Max(0, -tc.diff), math.Min(1, 1-tc.diff)
		for _, alpha := range []float64{0.025, 0.05, 0.005} {
			worst := 0.0
			for g := 0; g <= 200; g++ {
				pb := lo + (hi-lo)*float64(g)/200
				worst = math.Max(worst, size(pb, pb+tc.diff, alpha))
			}
			if worst > alpha*(1+1e-9) {
				t.Errorf("%+v: size %v at level %v", tc, worst, alpha)
			}
		}
		// Power at equal rates of 0.3 (inside the margin by its whole width): at least 80% of
		// the normal approximation's Φ(|diff|/se − z), not the near-zero power of a test whose
		// largest probability sits at an extreme rate.
		se := math.Sqrt(0.21/float64(tc.nc) + 0.21/float64(tc.nb))
		approx := NormalCDF(math.Abs(tc.diff)/se - NormalQuantile(0.95))
		if pw := size(0.3, 0.3, 0.05); pw < 0.8*approx {
			t.Errorf("%+v: power %v at equal rates, the normal approximation's %v", tc, pw, approx)
		}
	}
}

// Zero failures on both sides: the p-value for "the candidate is not 2 points worse" is at
// least (1-0.02)^n, the chance a candidate failing 2% never fails next to a baseline that
// never fails (one point of the null's boundary), and 200 clean trials each exclude it at
// 2.5%, 150 do not.
func TestDifferenceTestZeroFailures(t *testing.T) {
	for _, tc := range []struct {
		n    int
		want bool
	}{{200, true}, {150, false}, {400, true}} {
		p, err := DifferenceTest(Counts{0, tc.n}, Counts{0, tc.n}, 0.02, Less)
		if err != nil {
			t.Fatal(err)
		}
		if ref := math.Pow(0.98, float64(tc.n)); p < ref*(1-1e-9) {
			t.Errorf("0/%d vs 0/%d: p = %v, want about %v", tc.n, tc.n, p, ref)
		}
		if (p < 0.025) != tc.want {
			t.Errorf("0/%d vs 0/%d: p = %v", tc.n, tc.n, p)
		}
		q, _ := DifferenceTest(Counts{0, tc.n}, Counts{0, tc.n}, -0.02, Greater)
		if math.Abs(p-q) > 1e-12 {
			t.Errorf("0/%d: the two directions differ: %v, %v", tc.n, p, q)
		}
	}
	// The observed difference on the null's side: no evidence.
	if p, _ := DifferenceTest(Counts{10, 100}, Counts{2, 100}, 0.02, Less); p != 1 {
		t.Errorf("8 points worse against a 2-point margin: p = %v", p)
	}
	for _, bad := range []float64{1, -1, math.NaN()} {
		if _, err := DifferenceTest(Counts{0, 10}, Counts{0, 10}, bad, Less); err == nil {
			t.Errorf("diff %v accepted", bad)
		}
	}
}

// The closed form of the restricted maximum-likelihood rate is the root the bisection finds.
func TestRestrictedMLEClosedForm(t *testing.T) {
	for _, tc := range []struct {
		xc, nc, xb, nb int
		d              float64
	}{{0, 100, 0, 100, 0.02}, {3, 100, 7, 120, 0.02}, {40, 50, 10, 50, -0.1}, {50, 50, 50, 50, 0.05}, {0, 30, 30, 30, -0.3}, {12, 400, 6, 400, 0.02}, {5, 40, 5, 25, -0.15}} {
		got := restrictedMLE(tc.xc, tc.nc, tc.xb, tc.nb, tc.d)
		want := restrictedMLEBisect(tc.xc, tc.nc, tc.xb, tc.nb, tc.d)
		if math.Abs(got-want) > 1e-7 {
			t.Errorf("%+v: closed form %v, bisection %v", tc, got, want)
		}
	}
}

func BenchmarkDifferenceTest(b *testing.B) {
	for b.Loop() {
		DifferenceTest(Counts{Failures: 8, Trials: 400}, Counts{Failures: 8, Trials: 400}, 0.02, Less)
	}
}

// DifferenceTestBelow decides as DifferenceTest does at its level: the same p-value below it,
// a lower bound at or above it.
func TestDifferenceTestBelowDecidesTheSame(t *testing.T) {
	for xc := 0; xc <= 12; xc += 3 {
		for xb := 0; xb <= 12; xb += 2 {
			for _, alt := range []Alternative{Less, Greater} {
				c, b := Counts{xc, 300}, Counts{xb, 300}
				diff := 0.02
				if alt == Greater {
					diff = -0.02
				}
				p, _ := DifferenceTest(c, b, diff, alt)
				q, _ := DifferenceTestBelow(c, b, diff, alt, 0.025)
				if (p < 0.025) != (q < 0.025) || (p < 0.025 && p != q) || q > p {
					t.Errorf("%v vs %v, %v: exact %v, at 2.5%% %v", c, b, alt, p, q)
				}
			}
		}
	}
}
