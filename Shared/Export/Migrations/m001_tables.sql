-- Tollgate's export schema, version 1 (docs/EXPORT.md). Applied once by the exporter (or `tollctl export`) under
-- an advisory lock; never edited after release: a change is a new numbered file.
--
-- Money: `price` is in milliunits of `currency`, as Apple states it (1990 = 1.99). Times are timestamptz (UTC).
-- `environment` is Apple's (`production`, `sandbox`); grants and spends have none (Apple has no part in them).
-- `last_seq` is the user's event sequence the row reflects: an export writes a row only over an older one, so a
-- refund written first is never overwritten by its purchase arriving later on another replica.

-- One row per event (docs/EVENTS.md), whatever its type; `body` is the event's JSON as the ledger wrote it.
CREATE TABLE events (
    id text PRIMARY KEY,
    type text NOT NULL,
    user_id text,
    seq bigint NOT NULL,
    seq_scope text,
    at timestamptz NOT NULL,
    environment text,
    product_id text,
    transaction_id text,
    original_transaction_id text,
    quantity integer,
    price bigint,
    currency text,
    storefront text,
    ownership_type text,
    offer_type integer,
    offer_identifier text,
    purchased_at timestamptz,
    delta bigint,
    balance bigint,
    shortfall bigint,
    entitlement text,
    state text,
    expires_at timestamptz,
    auto_renew boolean,
    revocation_type text,
    revocation_percentage integer,
    reason text,
    job_id text,
    grant_id text,
    amount bigint,
    idempotency_key text,
    by_key text,
    notification_type text,
    subtype text,
    body jsonb NOT NULL,
    exported_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX events_user_seq ON events (user_id, seq);
CREATE INDEX events_at ON events (at);
CREATE INDEX events_transaction ON events (transaction_id);

-- One row per Apple transaction, as the ledger keeps it (Shared/Ledger/TransactionRecord.swift).
CREATE TABLE transactions (
    transaction_id text PRIMARY KEY,
    original_transaction_id text NOT NULL,
    user_id text NOT NULL,
    product_id text NOT NULL,
    product_type text NOT NULL,
    environment text NOT NULL,
    state text NOT NULL,
    quantity integer NOT NULL,
    coins bigint NOT NULL,
    debited bigint NOT NULL,
    shortfall bigint NOT NULL,
    purchased_at timestamptz NOT NULL,
    expires_at timestamptz,
    revoked_at timestamptz,
    revocation_type text,
    revocation_percentage integer,
    ownership_type text NOT NULL,
    withheld boolean NOT NULL,
    offer text,
    offer_signed boolean,
    price bigint,
    currency text,
    storefront text,
    offer_type integer,
    offer_identifier text,
    last_seq bigint NOT NULL,
    updated_at timestamptz NOT NULL
);
CREATE INDEX transactions_user ON transactions (user_id);
CREATE INDEX transactions_original ON transactions (original_transaction_id);
CREATE INDEX transactions_purchased ON transactions (purchased_at);

-- Renewal state over time: one row per event that changed a subscription's (or another entitlement's) state.
CREATE TABLE subscriptions (
    event_id text PRIMARY KEY,
    user_id text NOT NULL,
    seq bigint NOT NULL,
    at timestamptz NOT NULL,
    type text NOT NULL,
    environment text,
    original_transaction_id text,
    transaction_id text,
    product_id text,
    entitlement text NOT NULL,
    state text NOT NULL,
    expires_at timestamptz,
    auto_renew boolean
);
CREATE INDEX subscriptions_original ON subscriptions (original_transaction_id, seq);
CREATE INDEX subscriptions_user ON subscriptions (user_id, seq);

-- One row per user: coins and entitlements now (Shared/Ledger/EntitlementsView.swift).
-- `entitlements` is [{"entitlement", "state", "expiresAt", "source"}].
CREATE TABLE users (
    user_id text PRIMARY KEY,
    coins bigint NOT NULL,
    coins_granted bigint NOT NULL,
    coins_spent bigint NOT NULL,
    entitlements jsonb NOT NULL,
    last_seq bigint NOT NULL,
    updated_at timestamptz NOT NULL
);

-- Labelled grants (docs/EVENTS.md, "Grants"): `status` is `active`, `revoked` or `expired`.
CREATE TABLE grants (
    grant_id text PRIMARY KEY,
    user_id text NOT NULL,
    entitlement text,
    coins bigint,
    until timestamptz,
    reason text,
    by_key text,
    status text NOT NULL,
    revoked_by text,
    created_at timestamptz,
    ended_at timestamptz,
    last_seq bigint NOT NULL
);
CREATE INDEX grants_user ON grants (user_id);

-- Coins spent by a service (docs/EVENTS.md, "coins.spent").
CREATE TABLE spends (
    event_id text PRIMARY KEY,
    user_id text NOT NULL,
    seq bigint NOT NULL,
    at timestamptz NOT NULL,
    amount bigint NOT NULL,
    balance bigint NOT NULL,
    idempotency_key text NOT NULL,
    by_key text,
    reason text
);
CREATE INDEX spends_user ON spends (user_id, seq);

-- The catalog as the exporter last read it (TOLLGATE_CATALOG), with what the revenue views need: a subscription's
-- `period` (ISO 8601: P1W, P1M, P3M, P6M, P1Y) and Apple's commission (`commission_rate`; for auto-renewable
-- subscriptions `commission_rate_after_year` once a subscriber has a year of paid service). Rewritten at each start.
CREATE TABLE products (
    product_id text PRIMARY KEY,
    type text NOT NULL,
    entitlement text,
    coins bigint,
    period text,
    commission_rate numeric(5, 4) NOT NULL,
    commission_rate_after_year numeric(5, 4) NOT NULL
);
