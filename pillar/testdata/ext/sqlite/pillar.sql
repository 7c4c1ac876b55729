-- The sqlite3 ext_pillar's test database (pillar.db is made from this
-- file: sqlite3 pillar.db < pillar.sql).
CREATE TABLE kv (minion_id TEXT, k TEXT, v);
INSERT INTO kv VALUES ('web1', 'role', 'web'), ('web1', 'port', 80), ('web1', 'ratio', 2.5),
  ('web1', 'empty', NULL), ('web1', 'role', 'frontend'), ('db1', 'role', 'db'), ('db1', 'port', 5432);
CREATE TABLE apps (minion_id TEXT, app TEXT, env TEXT, setting TEXT, value);
INSERT INTO apps VALUES
  ('web1', 'nginx', 'prod', 'workers', 4), ('web1', 'nginx', 'prod', 'user', 'www-data'),
  ('web1', 'nginx', 'dev', 'workers', 1), ('web1', 'php', 'prod', 'memory', '256M'),
  ('web1', 'php', 'prod', 'memory', '512M'), ('web1', 'php', 'dev', 'debug', NULL),
  ('db1', 'postgres', 'prod', 'max_conn', 100);
CREATE TABLE users (minion_id TEXT, name TEXT, uid INTEGER, shell TEXT);
INSERT INTO users VALUES ('web1', 'alice', 1001, '/bin/bash'), ('web1', 'bob', 1002, NULL),
  ('web1', 'carol', 1003, '/bin/zsh'), ('db1', 'dba', 2001, '/bin/sh');
