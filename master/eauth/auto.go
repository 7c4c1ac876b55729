package eauth

// auto is salt.auth.auto: every user and password are accepted (for
// tests only).
type auto struct{}

func init() { register("auto", func(Env) (Backend, error) { return auto{}, nil }) }

func (auto) Auth(string, string) (bool, error) { return true, nil }
func (auto) Groups(string) ([]string, error)   { return nil, nil }
