{"json_state": {"test.succeed_without_changes": [{"comment": "from json"}]}}
