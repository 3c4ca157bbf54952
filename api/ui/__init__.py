"""The operators' admin pages: server-rendered, behind a service-key login."""
