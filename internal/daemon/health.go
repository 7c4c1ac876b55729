package daemon

import (
	"context"
	"log/slog"

	"github.com/gsalt/gsalt/internal/health"
)

// Health starts the health and metrics listener of cfg with
// --metrics-port and --metrics-host over it. It returns nil (the
// endpoints are off) when no port is set; the listener stops when ctx
// is done.
func (f *Flags) Health(ctx context.Context, cfg health.Config, log *slog.Logger) (*health.Server, error) {
	s := health.New(cfg.Override(f.MetricsPort, f.MetricsHost), log)
	if err := s.Start(ctx); err != nil {
		return nil, err
	}
	return s, nil
}
