{{ raise('custom failure message') }}
