#!toml
# the application's settings, written in TOML
[app]
name = "shop"
workers = 4
ratio = 0.75
debug = false
hosts = ["a.example.com", "b.example.com"]

[app.db]
port = 5432

[[app.backends]]
addr = "10.0.0.1"
[[app.backends]]
addr = "10.0.0.2"
