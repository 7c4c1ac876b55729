{% import 'lib/does_not_exist.jinja' as x %}
a: 1
