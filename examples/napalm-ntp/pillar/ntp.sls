ntp:
  servers:
    - 10.0.0.1
    - 10.0.0.2
  # Remove servers configured on the device but not listed above.
  remove_unlisted: true
  # Report the rendered configuration in the state's changes and comment.
  debug: false
