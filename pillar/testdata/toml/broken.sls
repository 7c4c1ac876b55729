#!toml
[db]
port = 1
port = 2
