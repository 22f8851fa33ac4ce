//go:build linux && (amd64 || arm64)

package jpeg

import "bytes"

// The markers the header walk needs (ITU-T T.81, table B.1).
const (
	markSOI = 0xD8
	markEOI = 0xD9
	markSOS = 0xDA
	markTEM = 0x01
)

// frame is what the walk learns of a JPEG's frame header.
type frame struct {
	width, height, components int
}

// walkHeaders checks the structure of data up to its first scan, so that
// what is surely not a whole JPEG never reaches nvJPEG: the start marker,
// every marker segment whole, a frame header (SOFn) before the first scan
// (SOS), and an end marker (EOI) after it. Entropy-coded data cannot hold
// the bytes FF D9 (an FF there is followed by 00 or a restart marker), so
// an EOI past the first scan header is the end of the image: a file cut
// short has none. Bytes after the EOI are allowed, as decoders allow them.
func walkHeaders(op string, data []byte) (frame, error) {
	var f frame
	if len(data) == 0 {
		return f, badData(op, ErrBadJPEG, "no data")
	}
	if len(data) < 2 || data[0] != 0xFF || data[1] != markSOI {
		return f, badData(op, ErrBadJPEG, "%d bytes without the JPEG start marker FF D8", len(data))
	}
	sof := false
	for i := 2; ; {
		if i >= len(data) || data[i] != 0xFF {
			if i >= len(data) {
				return f, badData(op, ErrBadJPEG, "the data ends at byte %d, before the first scan: truncated", len(data))
			}
			return f, badData(op, ErrBadJPEG, "byte %d is %#02x where a marker (FF) should be", i, data[i])
		}
		for i < len(data) && data[i] == 0xFF { // fill bytes before a marker
			i++
		}
		if i >= len(data) {
			return f, badData(op, ErrBadJPEG, "the data ends at byte %d, before the first scan: truncated", len(data))
		}
		m := data[i]
		i++
		switch {
		case m == markTEM || (m >= 0xD0 && m <= 0xD7): // no segment
			continue
		case m == markSOI || m == markEOI || m == 0x00:
			return f, badData(op, ErrBadJPEG, "marker FF %02X at byte %d, before the first scan", m, i-2)
		}
		if i+2 > len(data) {
			return f, badData(op, ErrBadJPEG, "the data ends inside marker FF %02X's length: truncated", m)
		}
		n := int(data[i])<<8 | int(data[i+1])
		if n < 2 {
			return f, badData(op, ErrBadJPEG, "marker FF %02X at byte %d gives its segment %d bytes", m, i-2, n)
		}
		if i+n > len(data) {
			return f, badData(op, ErrBadJPEG, "marker FF %02X at byte %d has %d bytes, past the end of the %d: truncated", m, i-2, n, len(data))
		}
		seg := data[i+2 : i+n]
		if isSOF(m) {
			if len(seg) < 6 {
				return f, badData(op, ErrBadJPEG, "a frame header (FF %02X) of %d bytes", m, len(seg))
			}
			f = frame{
				height:     int(seg[1])<<8 | int(seg[2]),
				width:      int(seg[3])<<8 | int(seg[4]),
				components: int(seg[5]),
			}
			if f.width == 0 || f.components == 0 {
				return f, badData(op, ErrBadJPEG, "a frame header of width %d and %d components", f.width, f.components)
			}
			if f.height == 0 {
				// The height comes later, in a DNL marker, which
				// nvJPEG does not read.
				return f, badData(op, ErrUnsupported, "a frame of height 0 (set by a DNL marker)")
			}
			sof = true
		}
		if m == markSOS {
			if !sof {
				return f, badData(op, ErrBadJPEG, "a scan (FF DA) before any frame header")
			}
			if bytes.LastIndex(data[i+n:], []byte{0xFF, markEOI}) < 0 {
				return f, badData(op, ErrBadJPEG, "no end marker (FF D9) after the first scan: truncated")
			}
			return f, nil
		}
		i += n
	}
}

// isSOF reports whether m starts a frame header: C0–CF but for DHT (C4),
// JPG (C8) and DAC (CC).
func isSOF(m byte) bool {
	return m >= 0xC0 && m <= 0xCF && m != 0xC4 && m != 0xC8 && m != 0xCC
}

// Check runs the checks every call of a Decoder makes on JPEG bytes
// before nvJPEG sees them (see the package comment), on the host alone:
// nil for what looks like a whole JPEG, else an error matching ErrBadJPEG
// (or ErrUnsupported, for a frame whose height a DNL marker gives). It
// needs no GPU and no library, and does not decode: nvJPEG may still find
// the data damaged.
func Check(data []byte) error {
	_, err := walkHeaders("jpeg.Check", data)
	return err
}
