package netapi

import "testing"

func TestRouteLabels(t *testing.T) {
	for _, tc := range []struct {
		prefix, hook, path, want string
	}{
		{"/", "/hook", "/", "/"},
		{"/", "/hook", "/login", "/login"},
		{"/", "/hook", "/minions/m1", "/minions"},
		{"/", "/hook", "/jobs/20260101010101000000", "/jobs"},
		{"/", "/hook", "/hook/my/tag", "/hook"},
		{"/", "/hook", "/hook", "/hook"},
		{"/", "/hook", "/hooks", "other"},
		{"/", "/hook", "/random/path", "other"},
		{"/api", "/hook", "/api/minions", "/minions"},
		{"/api", "/hook", "/minions", "other"},
		{"/api", "/deploy", "/api/deploy/x", "/deploy"},
	} {
		s := &Server{opts: Options{RootPrefix: tc.prefix, WebhookURL: tc.hook}}
		if got := s.route(tc.path); got != tc.want {
			t.Errorf("route(%q) with root_prefix %q = %q, want %q", tc.path, tc.prefix, got, tc.want)
		}
	}
}
