"""The language server: pygls transport, wire schema, handlers, event bridge, approvals."""
