-- Migration 2 (release 0.2.0): the ledger, and the record the release before reads.
--
-- The ledger itself, schema_migrations, is made by the runner before any migration, since it
-- records them all (service/store/migrate.py). Release 0.1.0 applies its schema.sql at
-- start-up unless schema_applied holds that text's SHA-256, which is migration 1's: recording
-- it here lets an instance of 0.1.0 start on a database this release made (a rolling upgrade
-- or a roll-back) without replaying statements that take every table's lock. schema_applied
-- goes once no instance of 0.1.0 runs anywhere: a later release's migration drops it.
INSERT INTO schema_applied (digest)
VALUES ('be13bf91d3a3ece3350d04d0d20f0d15fc119a077b8296e551736e1f009ebb9e')
ON CONFLICT DO NOTHING;
