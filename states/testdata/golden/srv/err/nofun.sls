foo:
  test:
    - name: x
