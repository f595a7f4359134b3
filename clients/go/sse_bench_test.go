package agenticdriver

import (
	"bytes"
	"io"
	"os"
	"testing"
)

// BenchmarkSSEDecoder decodes the recorded event stream named by AD_SSE_BENCH_FILE
// (bench/decoders.ts writes it) through the client's SSE reader; skipped without it.
//
//	AD_SSE_BENCH_FILE=… go test -run '^$' -bench BenchmarkSSEDecoder -benchtime 5x
func BenchmarkSSEDecoder(b *testing.B) {
	path := os.Getenv("AD_SSE_BENCH_FILE")
	if path == "" {
		b.Skip("AD_SSE_BENCH_FILE is not set")
	}
	body, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(body)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		reader := newSSEReader(bytes.NewReader(body))
		frames := 0
		for {
			_, err := reader.next()
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			frames++
		}
		if frames == 0 {
			b.Fatal("no frames")
		}
	}
}
