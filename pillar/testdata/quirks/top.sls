base:
  '*':
    - circ_a
    - dup_err_parent
    - rel.child
    - glob_inc
    - 'glob*'
  'web1':
    - circ_b
