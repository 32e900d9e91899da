"""The store's LTI 1.3 records: platforms, their registrations and keys, logins, resource links, and the
outbox of scores waiting to be sent."""
