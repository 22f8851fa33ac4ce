//go:build linux && (amd64 || arm64)

package jpeg_test

import (
	"bytes"
	"fmt"
	"image"
	stdjpeg "image/jpeg"
	"math"
)

// Go's image/jpeg writes colour JPEGs only as 4:2:0. encode444 writes a
// baseline 4:4:4 JPEG of img for the tests, with the quantization and
// Huffman tables that image/jpeg writes at the same quality (taken from
// its output, so that no table is typed here): a forward DCT per 8×8
// block, quantization, and Huffman coding of the blocks, interleaved
// Y, Cb, Cr.
func encode444(img image.Image, quality int) ([]byte, error) {
	dqt, dht, err := goTables(quality)
	if err != nil {
		return nil, err
	}
	q, err := parseDQT(dqt)
	if err != nil {
		return nil, err
	}
	codes, err := parseDHT(dht)
	if err != nil {
		return nil, err
	}
	b := img.Bounds()
	w, h := b.Dx(), b.Dy()
	var out bytes.Buffer
	out.Write([]byte{0xFF, 0xD8})
	writeSegment(&out, 0xDB, dqt)
	writeSegment(&out, 0xC0, []byte{8, byte(h >> 8), byte(h), byte(w >> 8), byte(w), 3,
		1, 0x11, 0, 2, 0x11, 1, 3, 0x11, 1})
	writeSegment(&out, 0xC4, dht)
	writeSegment(&out, 0xDA, []byte{3, 1, 0x00, 2, 0x11, 3, 0x11, 0, 63, 0})
	bw := &bitWriter{out: &out}
	var pred [3]int
	for by := 0; by < (h+7)/8; by++ {
		for bx := 0; bx < (w+7)/8; bx++ {
			var blocks [3][64]float64
			for y := range 8 {
				for x := range 8 {
					// Edge blocks repeat the last row and column.
					px, py := min(bx*8+x, w-1), min(by*8+y, h-1)
					r, g, bl, _ := img.At(b.Min.X+px, b.Min.Y+py).RGBA()
					R, G, B := float64(r>>8), float64(g>>8), float64(bl>>8)
					blocks[0][y*8+x] = 0.299*R + 0.587*G + 0.114*B
					blocks[1][y*8+x] = -0.168736*R - 0.331264*G + 0.5*B + 128
					blocks[2][y*8+x] = 0.5*R - 0.418688*G - 0.081312*B + 128
				}
			}
			for c := range 3 {
				t := 0
				if c > 0 {
					t = 1
				}
				coef := fdctQuantize(&blocks[c], &q[t])
				bw.block(&coef, &pred[c], codes[0][t], codes[1][t])
			}
		}
	}
	bw.flush()
	out.Write([]byte{0xFF, 0xD9})
	return out.Bytes(), nil
}

// goTables returns the payloads of the DQT and DHT segments image/jpeg
// writes for a colour image at quality.
func goTables(quality int) (dqt, dht []byte, err error) {
	var buf bytes.Buffer
	if err := stdjpeg.Encode(&buf, image.NewRGBA(image.Rect(0, 0, 16, 16)), &stdjpeg.Options{Quality: quality}); err != nil {
		return nil, nil, err
	}
	data := buf.Bytes()
	for i := 2; i+4 <= len(data) && data[i] == 0xFF; {
		m := data[i+1]
		n := int(data[i+2])<<8 | int(data[i+3])
		seg := data[i+4 : i+2+n]
		switch m {
		case 0xDB:
			dqt = seg
		case 0xC4:
			dht = seg
		}
		if m == 0xDA {
			break
		}
		i += 2 + n
	}
	if dqt == nil || dht == nil {
		return nil, nil, fmt.Errorf("image/jpeg's output has no DQT or DHT segment")
	}
	return dqt, dht, nil
}

// parseDQT returns tables 0 and 1, in zigzag order as DQT holds them.
func parseDQT(seg []byte) (q [2][64]int, err error) {
	for len(seg) >= 65 {
		pq, tq := seg[0]>>4, seg[0]&15
		if pq != 0 || tq > 1 {
			return q, fmt.Errorf("DQT table %d of precision %d", tq, pq)
		}
		for k := range 64 {
			q[tq][k] = int(seg[1+k])
		}
		seg = seg[65:]
	}
	return q, nil
}

// huffCode is a symbol's code: its bits, right-aligned, and their count.
type huffCode struct {
	bits uint32
	n    uint
}

// parseDHT returns the codes of the DC ([0]) and AC ([1]) tables 0 and
// 1, made from the counts and symbols as ITU-T T.81 annex C makes them.
func parseDHT(seg []byte) (codes [2][2]map[byte]huffCode, err error) {
	for len(seg) >= 17 {
		tc, th := seg[0]>>4, seg[0]&15
		if tc > 1 || th > 1 {
			return codes, fmt.Errorf("DHT table class %d id %d", tc, th)
		}
		total := 0
		for _, c := range seg[1:17] {
			total += int(c)
		}
		if len(seg) < 17+total {
			return codes, fmt.Errorf("DHT table of %d symbols in %d bytes", total, len(seg))
		}
		m := map[byte]huffCode{}
		vals := seg[17 : 17+total]
		code := uint32(0)
		for l := 1; l <= 16; l++ {
			for range seg[l] {
				m[vals[0]] = huffCode{code, uint(l)}
				vals = vals[1:]
				code++
			}
			code <<= 1
		}
		codes[tc][th] = m
		seg = seg[17+total:]
	}
	return codes, nil
}

// zigzag[k] is the index (row·8 + column) of the k-th coefficient of the
// zigzag order: along the anti-diagonals, alternating direction.
var zigzag = func() (z [64]int) {
	k := 0
	for s := range 15 {
		for i := range s + 1 {
			r := i
			if s%2 == 0 {
				r = s - i
			}
			c := s - r
			if r < 8 && c < 8 {
				z[k] = r*8 + c
				k++
			}
		}
	}
	return z
}()

// dctCos[x][u] is cos((2x+1)uπ/16).
var dctCos = func() (c [8][8]float64) {
	for x := range 8 {
		for u := range 8 {
			c[x][u] = math.Cos(float64(2*x+1) * float64(u) * math.Pi / 16)
		}
	}
	return c
}()

// fdctQuantize returns the quantized DCT of a block of samples, in
// zigzag order; q is in zigzag order too.
func fdctQuantize(block *[64]float64, q *[64]int) (out [64]int) {
	var f [64]float64
	for v := range 8 {
		for u := range 8 {
			s := 0.0
			for y := range 8 {
				for x := range 8 {
					s += (block[y*8+x] - 128) * dctCos[x][u] * dctCos[y][v]
				}
			}
			cu, cv := 1.0, 1.0
			if u == 0 {
				cu = math.Sqrt2 / 2
			}
			if v == 0 {
				cv = math.Sqrt2 / 2
			}
			f[v*8+u] = s * cu * cv / 4
		}
	}
	for k := range 64 {
		out[k] = int(math.Round(f[zigzag[k]] / float64(q[k])))
	}
	return out
}

// bitWriter writes the entropy-coded data, an 00 after each FF byte.
type bitWriter struct {
	out  *bytes.Buffer
	acc  uint32
	nacc uint
}

func (w *bitWriter) put(bits uint32, n uint) {
	for i := int(n) - 1; i >= 0; i-- {
		w.acc = w.acc<<1 | (bits>>uint(i))&1
		w.nacc++
		if w.nacc == 8 {
			w.out.WriteByte(byte(w.acc))
			if byte(w.acc) == 0xFF {
				w.out.WriteByte(0)
			}
			w.acc, w.nacc = 0, 0
		}
	}
}

// flush pads the last byte with ones.
func (w *bitWriter) flush() {
	for w.nacc != 0 {
		w.put(1, 1)
	}
}

// magnitude returns the category of v and the bits that follow its code.
func magnitude(v int) (uint, uint32) {
	a := v
	if a < 0 {
		a = -a
	}
	n := uint(0)
	for a>>n != 0 {
		n++
	}
	if v < 0 {
		v += 1<<n - 1
	}
	return n, uint32(v) & (1<<n - 1)
}

func (w *bitWriter) symbol(m map[byte]huffCode, s byte) {
	c, ok := m[s]
	if !ok {
		panic(fmt.Sprintf("no Huffman code for symbol %#02x", s))
	}
	w.put(c.bits, c.n)
}

func (w *bitWriter) block(coef *[64]int, pred *int, dc, ac map[byte]huffCode) {
	n, bits := magnitude(coef[0] - *pred)
	*pred = coef[0]
	w.symbol(dc, byte(n))
	w.put(bits, n)
	run := 0
	for k := 1; k < 64; k++ {
		if coef[k] == 0 {
			run++
			continue
		}
		for ; run > 15; run -= 16 {
			w.symbol(ac, 0xF0)
		}
		n, bits := magnitude(coef[k])
		w.symbol(ac, byte(run<<4)|byte(n))
		w.put(bits, n)
		run = 0
	}
	if run > 0 {
		w.symbol(ac, 0x00)
	}
}

func writeSegment(out *bytes.Buffer, marker byte, payload []byte) {
	n := len(payload) + 2
	out.Write([]byte{0xFF, marker, byte(n >> 8), byte(n)})
	out.Write(payload)
}
