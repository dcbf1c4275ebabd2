// Command gensanlog writes a large, deterministic, realistic compute-sanitizer log
// for benchmarks: many memcheck reports from different kernels in the location
// formats of every sanitizer generation, two-line and one-line host frames, CUDA API
// errors, and pytest/xdist application output interleaved between and inside reports.
//
//	gensanlog [-size BYTES] [-seed N] -o FILE
//
// It prints the number of records it wrote, so a benchmark can check the parser:
//
//	bytes=... lines=... access_records=... api_records=... invalid_global_lines=...
package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"

	"github.com/debugflow/debugflow/bench/internal/genlog"
)

func main() { genlog.Main("gensanlog", run) }

func run(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("gensanlog", flag.ContinueOnError)
	fs.SetOutput(stderr)
	size := fs.Int64("size", 1<<30, "approximate size of the log in bytes")
	seed := fs.Uint64("seed", 1, "random seed (same seed, same file)")
	out := fs.String("o", "", "output file")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *out == "" {
		return errors.New("usage: gensanlog [-size BYTES] [-seed N] -o FILE")
	}
	var st stats
	err := genlog.WriteFile(*out, func(w *bufio.Writer) (err error) {
		st, err = generate(w, *size, *seed)
		return err
	})
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(stdout, "bytes=%d lines=%d access_records=%d api_records=%d invalid_global_lines=%d\n",
		st.bytes, st.lines, st.access, st.api, st.invalidGlobal)
	return err
}

type stats struct {
	bytes, lines, access, api, invalidGlobal int64
}

type gen struct {
	w   *bufio.Writer
	r   *rand.Rand
	st  stats
	err error
}

func (g *gen) line(s string) {
	if g.err != nil {
		return
	}
	n, err := g.w.WriteString(s)
	if err == nil {
		err = g.w.WriteByte('\n')
		n++
	}
	g.err = err
	g.st.bytes += int64(n)
	g.st.lines++
}

func (g *gen) linef(format string, a ...any) { g.line(fmt.Sprintf(format, a...)) }

// kernels are device functions as the different sanitizer generations print them.
var kernels = []string{
	"void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, at::detail::Array<char *, 1>>(int, T2, T3)",
	"void at::native::<unnamed>::indexSelectLargeIndex<float, long, unsigned int, 2, 2, -2, true>(at::cuda::detail::TensorInfo<T1, T3>, at::cuda::detail::TensorInfo<const T1, T3>, at::cuda::detail::TensorInfo<const T2, T3>, int, int, T3, T3, long)",
	"ad_ndarray_kernel_0_range_for",
	"ad_ndarray_kernel_1_range_for",
	"quadrants::lang::cuda_kernel_grad_accumulate(float *, const float *, int)",
	"scatter_add_kernel(float *, const long *, const float *, int)",
	"gather_rows<float>(const float *, const int *, float *, int, int)",
	"void cub::CUB_200200_700_750_800_860_900_NS::DeviceReduceSingleTileKernel<cub::DeviceReducePolicy<short, unsigned int, thrust::minimum<void>>::Policy600, short *, short *, unsigned int, thrust::minimum<void>, short, short>(T2, T3, T4, T5, T6)",
	"compress(const unsigned int *, const unsigned int *, uint2 *, int)",
	"softmax_forward_kernel<__half, 128>(const __half *, __half *, int)",
	"layernorm_backward(float *, const float *, const float *, int, int)",
	"matmul_tiled<32>(const float *, const float *, float *, int, int, int)",
}

var apps = []string{
	"tests/python/test_ad_ndarray.py::test_ad_ndarray_fill[cuda-%d-50] PASSED",
	"[gw%d] [ 12%%] PASSED tests/python/test_ad_ndarray.py::test_ad_ndarray_index[cuda-3-50]",
	"[gw%d] [ 47%%] FAILED tests/python/test_ad_ndarray.py::test_ad_ndarray_grad[cuda-7-50]",
	"[Quadrants] version 1.7.%d, llvm 15.0.7, commit 2a3b4c5d, linux, python 3.10.12",
	"[Quadrants] Starting on arch=cuda, device %d",
	"    x = qd.ndarray(qd.f32, shape=(n,)) # line %d",
	"E       RuntimeError: CUDA error: an illegal memory access was encountered (%d)",
	"tests/python/test_ad_ndarray.py:%d: in test_ad_ndarray_grad",
}

var modules = []string{
	"/lib/x86_64-linux-gnu/libcuda.so.1",
	"/usr/local/lib/python3.10/dist-packages/quadrants/_lib/core/quadrants_python.so",
	"/usr/local/cuda/targets/x86_64-linux/lib/libcudart.so.12",
	"/usr/bin/python3.10",
}

var apiErrors = []string{
	`Program hit cudaErrorLaunchFailure (error 719) due to "unspecified launch failure" on CUDA API call to cudaDeviceSynchronize.`,
	`Program hit CUDA_ERROR_ILLEGAL_ADDRESS (error 700) due to "an illegal memory access was encountered" on CUDA API call to cuStreamSynchronize.`,
	`Program hit cudaErrorInvalidValue (error 1) due to "invalid argument" on CUDA API call to cudaMemcpyAsync.`,
}

func generate(w *bufio.Writer, size int64, seed uint64) (stats, error) {
	g := &gen{w: w, r: rand.New(rand.NewPCG(seed, 0x5eed))}
	g.line("python3 -m pytest -n 8 --count 50 tests/python/test_ad_ndarray.py -k cuda")
	g.line("========= COMPUTE-SANITIZER")
	for g.st.bytes < size && g.err == nil {
		switch x := g.r.IntN(100); {
		case x < 35:
			for range 1 + g.r.IntN(4) {
				g.app()
			}
		case x < 92:
			g.access()
		default:
			g.apiError()
		}
	}
	g.linef("========= ERROR SUMMARY: %d errors", g.st.access+g.st.api)
	return g.st, g.err
}

func (g *gen) app() {
	g.linef(apps[g.r.IntN(len(apps))], g.r.IntN(100))
}

func (g *gen) access() {
	g.st.access++
	space := []string{"global", "global", "global", "shared", "local"}[g.r.IntN(5)]
	op := []string{"read", "write"}[g.r.IntN(2)]
	if space == "global" {
		g.st.invalidGlobal++
	}
	size := []int{1, 2, 4, 4, 8, 16}[g.r.IntN(6)]
	k := kernels[g.r.IntN(len(kernels))]
	style := g.r.IntN(4)
	if style == 3 {
		g.linef("========= Invalid __%s__ %s of size %d", space, op, size) // cuda-memcheck
	} else {
		g.linef("========= Invalid __%s__ %s of size %d bytes", space, op, size)
	}
	pc := 0x40 + 0x10*g.r.IntN(400)
	switch style {
	case 0:
		g.linef("=========     at %s+0x%x in /work/quadrants/kernels/ad_ndarray.cu:%d", k, pc, 20+g.r.IntN(200))
	case 1:
		g.linef("=========     at 0x%x in %s", pc, k)
	case 2:
		g.linef("=========     at %s+0x%x", k, pc)
	default:
		g.linef("=========     at 0x%08x in %s", pc, k)
	}
	g.linef("=========     by thread (%d,0,0) in block (%d,0,0)", g.r.IntN(256), g.r.IntN(1024))
	addr := 0x7f0000000000 + uint64(g.r.IntN(1<<30))*8
	word := []string{"Address", "Address", "Access at"}[g.r.IntN(3)]
	g.linef("=========     %s 0x%x is out of bounds", word, addr)
	if g.r.IntN(2) == 0 {
		g.linef("=========     and is %s bytes after the nearest allocation at 0x%x of size %s bytes",
			commas(g.r.IntN(5000)), addr-uint64(4096), commas(4096+g.r.IntN(100000)))
	}
	if g.r.IntN(10) == 0 {
		g.app() // application output inside a report
	}
	g.line("=========     Saved host backtrace up to driver entry point at kernel launch time")
	frames := 4 + g.r.IntN(14)
	for i := range frames {
		g.frame(style, i)
	}
	g.line("========= ")
}

func (g *gen) frame(style, i int) {
	off := 0x1000 + g.r.IntN(0x400000)
	switch style {
	case 0:
		g.linef("=========         Host Frame: quadrants::lang::CUDADriver::launch_%d [0x%x] in quadrants_python.so", i, off)
	case 3:
		g.linef("=========     Host Frame:%s (cuLaunchKernel + 0x2cd) [0x%x]", modules[i%len(modules)], off)
	default:
		if i == 0 {
			g.linef("=========     Host Frame: [0x%x]", off)
		} else {
			g.linef("=========     Host Frame:quadrants::lang::KernelLauncher::launch_llvm_kernel(unsigned long, quadrants::lang::LaunchContextBuilder&) [0x%x]", off)
		}
		g.linef("=========                in %s", modules[i%len(modules)])
	}
}

func (g *gen) apiError() {
	g.st.api++
	g.line("========= " + apiErrors[g.r.IntN(len(apiErrors))])
	g.line("=========     Saved host backtrace up to driver entry point at error")
	for i := range 3 + g.r.IntN(8) {
		g.frame(1, i)
	}
	g.line("========= ")
}

// commas formats n with thousands separators half of the time, as some sanitizer
// versions do.
func commas(n int) string {
	s := fmt.Sprint(n)
	if len(s) <= 3 || n%2 == 0 {
		return s
	}
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}
