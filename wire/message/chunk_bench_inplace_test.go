package message

import (
	"github.com/gsalt/gsalt/wire/crypt"
	"github.com/gsalt/gsalt/wire/payload"
)

// openReplyForBench is what the minion uses to open a reply it owns.
func openReplyForBench(c *crypt.Crypticle, frame []byte, nonce string) (any, error) {
	return OpenSendReplyInPlace(c, frame, nonce, payload.DefaultLimits)
}
