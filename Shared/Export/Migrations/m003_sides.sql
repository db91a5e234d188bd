-- The user's sandbox side (Shared/Pipeline/LedgerSide.swift): a production deployment that accepts sandbox data
-- (App Review, TestFlight) keeps it on a ledger of its own per user, whose events count their own `seq`.
-- `side` is `primary` (the deployment's own environment) or `sandbox`; events and spends say which, and the sandbox
-- side's coins and entitlements are rows of `sandbox_users`, never of `users`. Transactions and subscriptions already
-- carry Apple's `environment`, which the revenue views filter on.
ALTER TABLE events ADD COLUMN side text NOT NULL DEFAULT 'primary';
DROP INDEX events_user_seq;
CREATE INDEX events_user_seq ON events (user_id, side, seq);
ALTER TABLE spends ADD COLUMN side text NOT NULL DEFAULT 'primary';
CREATE TABLE sandbox_users (LIKE users INCLUDING ALL);
