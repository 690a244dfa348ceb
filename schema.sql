-- The one source of the database schema, applied at every start-up: every statement is idempotent.

CREATE TABLE IF NOT EXISTS players (
    player_id  uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    name       text NOT NULL,
    rating     integer NOT NULL DEFAULT 1000,
    created_at timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX IF NOT EXISTS players_rating_idx ON players (rating DESC, player_id);
