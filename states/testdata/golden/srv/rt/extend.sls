include:
  - rt.extend_base
extend:
  ext_target:
    test.succeed_without_changes:
      - comment: extended
      - require:
        - test: ext_dep
  ext_by_name:
    test:
      - comment: by name
exclude:
  - id: excluded_one
  - sls: rt.extend_gone
