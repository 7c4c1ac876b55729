package main

import (
	"context"
	"log/slog"

	"github.com/gsalt/gsalt/config"
	"github.com/gsalt/gsalt/internal/daemon"
	"github.com/gsalt/gsalt/internal/health"
)

// proxyHealth starts the health and metrics listener from the first
// proxy id's configuration (metrics_port, metrics_host, ...) and the
// --metrics-port/--metrics-host flags.
func proxyHealth(ctx context.Context, cfg *config.Minion, df *daemon.Flags, log *slog.Logger) (*health.Server, error) {
	hc, err := health.ConfigFrom(cfg.Opts.Get, health.DefaultHost)
	if err != nil {
		return nil, err
	}
	return df.Health(ctx, hc, log)
}
