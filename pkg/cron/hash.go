package cron

import "crypto/md5"

// hashSource draws the values of H fields exactly as Jenkins does
// (hudson.scheduler.Hash.from): the MD5 digest of the key's UTF-8 bytes,
// folded to 64 bits, seeds one java.util.Random that every H term of the
// schedule draws from in order (minute, hour, day of month, month, day of
// week; left to right within a field). The same key therefore gives the same
// minutes in ontime as in a Jenkins job with that full name.
type hashSource struct {
	seed int64
}

func newHashSource(key string) *hashSource {
	digest := md5.Sum([]byte(key))
	for i := 8; i < len(digest); i++ {
		digest[i%8] ^= digest[i]
	}
	var folded int64
	for i := 0; i < 8; i++ {
		folded = folded<<8 + int64(digest[i])
	}
	return &hashSource{seed: (folded ^ javaMultiplier) & javaMask}
}

const (
	javaMultiplier = 0x5DEECE66D
	javaMask       = 1<<48 - 1
)

// next is java.util.Random.next(bits).
func (h *hashSource) next(bits uint) int32 {
	h.seed = (h.seed*javaMultiplier + 0xB) & javaMask
	return int32(h.seed >> (48 - bits))
}

// intn is java.util.Random.nextInt(bound), including its rejection loop,
// which relies on 32-bit overflow.
func (h *hashSource) intn(bound int) int {
	n := int32(bound)
	r := h.next(31)
	m := n - 1
	if n&m == 0 {
		return int((int64(n) * int64(r)) >> 31)
	}
	for u := r; ; u = h.next(31) {
		r = u % n
		if u-r+m >= 0 {
			return int(r)
		}
	}
}
