plain_color: {{ color }}
