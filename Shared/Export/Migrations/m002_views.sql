-- Tollgate's export schema, version 2: revenue models as views over version 1's tables (docs/EXPORT-VIEWS.md).
-- Plain PostgreSQL 15; applied once after m001_tables.sql, never edited after release (a change is a new file).
--
-- Every figure counts Apple's `production` environment only: sandbox (and Xcode, local testing) never counts.
-- Money: `price` is milliunits of `currency` for ONE unit; a transaction's gross is price * quantity / 1000, in
-- currency units (numeric). No currency is converted into another: every money figure is per currency.
-- Days and months are UTC. Assumptions, in short (the document has them in full):
--   * Storefront prices include VAT / sales tax in most storefronts; Apple pays proceeds on the price before tax,
--     so `estimated_proceeds` is an upper estimate (gross * (1 - commission)), not what Apple will pay.
--   * Apple's lower commission after "a year of paid service" is approximated by: an auto-renewable transaction
--     purchased a year or more after the first paid transaction of its chain (original_transaction_id) held here.
--     Apple's gaps of more than 60 days, which reset the year, are not modelled.
--   * A FAMILY_SHARED transaction is a family member's copy of someone else's purchase: Apple charged nobody for it,
--     so it never counts as revenue, a trial or a paying subscriber (active_subscriptions and family_share show it).
--   * A transaction without a price (receipts validated by verifyReceipt carry none) counts as a purchase with an
--     unknown amount (`unpriced`), never as a free one.

-- The instant the "now" views use: now(), unless the session (or database) sets `tollgate.now`, e.g.
-- `SET tollgate.now = '2026-03-31 12:00:00+00'` to see the figures as they stood then (scripts/check-business).
CREATE FUNCTION tollgate_now() RETURNS timestamptz
LANGUAGE sql STABLE
BEGIN ATOMIC
    SELECT coalesce(nullif(current_setting('tollgate.now', true), '')::timestamptz, now());
END;

-- One row per production transaction with what every revenue view derives from it:
--   gross              price * quantity in currency units (NULL when Apple stated no price)
--   free               a known price of 0 (a free trial, or a free offer): no purchase, no revenue
--   free_trial         Apple's introductory offer at price 0 (offer_type = 1 AND price = 0)
--   refunded_at        when a refunded transaction was refunded (revoked_at; updated_at when that is missing)
--   refunded           gross * revocation_percentage / 100000 for a refunded transaction (a full refund without a
--                      percentage is 100000), else 0
--   paid_since         the first paid (price > 0) purchase of its chain held here
--   commission         the product's commission_rate, or commission_rate_after_year for an auto-renewable
--                      transaction purchased a year or more after paid_since; a product missing from the catalog
--                      pays the standard 0.30
--   access_until       auto-renewable only: when its access ends (expires_at, or the refund's instant when refunded);
--                      NULL for a withheld repeated trial, which grants nothing
--   monthly_value      auto-renewable only: gross per month of its period (P1W * 52 / 12, P1M, P2M / 2, P3M / 3,
--                      P6M / 6, P1Y / 12); 0 for a free trial; NULL for an unknown period
CREATE VIEW transaction_facts AS
WITH production AS (
    SELECT t.*,
           p.period,
           coalesce(p.commission_rate, 0.30) AS rate,
           coalesce(p.commission_rate_after_year, 0.30) AS rate_after_year,
           round((t.price * t.quantity)::numeric / 1000, 3) AS gross,
           min(t.purchased_at) FILTER (WHERE t.price > 0)
               OVER (PARTITION BY t.ownership_type, t.original_transaction_id) AS paid_since,
           CASE WHEN t.state = 'refunded' THEN coalesce(t.revoked_at, t.updated_at) END AS refund_instant
    FROM transactions t
    LEFT JOIN products p ON p.product_id = t.product_id
    WHERE t.environment = 'production'
)
SELECT transaction_id,
       original_transaction_id,
       user_id,
       product_id,
       product_type,
       state,
       ownership_type,
       ownership_type = 'FAMILY_SHARED' AS family_shared,
       withheld,
       purchased_at,
       expires_at,
       quantity,
       price,
       currency,
       storefront,
       offer_type,
       gross,
       coalesce(price = 0, false) AS free,
       coalesce(offer_type = 1 AND price = 0, false) AS free_trial,
       refund_instant AS refunded_at,
       CASE WHEN refund_instant IS NOT NULL
            THEN gross * coalesce(revocation_percentage, 100000) / 100000
            ELSE 0 END AS refunded,
       paid_since,
       CASE WHEN product_type = 'autoRenewable' AND purchased_at >= paid_since + interval '1 year'
            THEN rate_after_year ELSE rate END AS commission,
       CASE WHEN product_type = 'autoRenewable' AND NOT withheld
            THEN CASE WHEN refund_instant IS NOT NULL THEN least(expires_at, refund_instant) ELSE expires_at END
       END AS access_until,
       CASE WHEN product_type <> 'autoRenewable' THEN NULL
            WHEN coalesce(offer_type = 1 AND price = 0, false) THEN 0
            ELSE gross * CASE period WHEN 'P1W' THEN 52 WHEN 'P1M' THEN 12 WHEN 'P2M' THEN 6 WHEN 'P3M' THEN 4
                                     WHEN 'P6M' THEN 2 WHEN 'P1Y' THEN 1 END / 12
       END AS monthly_value
FROM production;

-- The auto-renewable chains as they stood at `instant`: for each chain (user and original_transaction_id) its latest
-- transaction purchased by then, and whether that transaction gave access at that instant (`active`). A chain whose
-- latest transaction was refunded or has expired is inactive (a grace period or billing retry is inactive too: the
-- views read transactions, which carry the money, not the renewal states of `subscriptions`).
CREATE FUNCTION subscription_chains_at(instant timestamptz)
RETURNS TABLE (
    user_id text,
    original_transaction_id text,
    transaction_id text,
    product_id text,
    family_shared boolean,
    free_trial boolean,
    currency text,
    monthly_value numeric,
    active boolean
)
LANGUAGE sql STABLE
BEGIN ATOMIC
    SELECT DISTINCT ON (f.user_id, f.original_transaction_id)
           f.user_id, f.original_transaction_id, f.transaction_id, f.product_id, f.family_shared, f.free_trial,
           f.currency, f.monthly_value, f.access_until > instant
    FROM transaction_facts f
    WHERE f.access_until IS NOT NULL AND f.purchased_at <= instant
    ORDER BY f.user_id, f.original_transaction_id, f.purchased_at DESC, f.transaction_id DESC;
END;

-- Revenue per UTC day, product, currency and storefront. A purchase counts on the day it was purchased; a refund on
-- the day it was refunded (as Apple's finance reports do: a refund never rewrites a closed day).
--   purchases, units     paid transactions (not free, not FAMILY_SHARED) purchased that day, and their quantity
--   unpriced             those of them with no price stated (their gross is unknown and counted as 0)
--   gross                sum of price * quantity, in currency units
--   refunds, refunded    transactions refunded that day, and gross * revocation_percentage / 100000 of each
--   net                  gross - refunded
--   estimated_proceeds   sum of (gross - refunded) * (1 - commission) per transaction (transaction_facts); an upper
--                        estimate: the prices include VAT / sales tax in most storefronts, which Apple takes off first
CREATE VIEW revenue_daily AS
WITH paid AS (
    SELECT * FROM transaction_facts WHERE NOT family_shared AND NOT free
),
lines AS (
    SELECT (purchased_at AT TIME ZONE 'UTC')::date AS day, product_id, currency, storefront,
           1 AS purchases, quantity AS units, CASE WHEN price IS NULL THEN 1 ELSE 0 END AS unpriced,
           coalesce(gross, 0) AS gross, 0 AS refunds, 0 AS refunded,
           coalesce(gross, 0) * (1 - commission) AS proceeds
    FROM paid
    UNION ALL
    SELECT (refunded_at AT TIME ZONE 'UTC')::date, product_id, currency, storefront,
           0, 0, 0,
           0, 1, coalesce(refunded, 0),
           -coalesce(refunded, 0) * (1 - commission)
    FROM paid
    WHERE refunded_at IS NOT NULL
)
SELECT day,
       product_id,
       currency,
       storefront,
       sum(purchases)::bigint AS purchases,
       sum(units)::bigint AS units,
       sum(unpriced)::bigint AS unpriced,
       round(sum(gross), 4) AS gross,
       sum(refunds)::bigint AS refunds,
       round(sum(refunded), 4) AS refunded,
       round(sum(gross) - sum(refunded), 4) AS net,
       round(sum(proceeds), 4) AS estimated_proceeds
FROM lines
GROUP BY day, product_id, currency, storefront;

-- Monthly recurring revenue now (tollgate_now()), per currency (no conversion): the monthly_value of each paying
-- chain's transaction giving access now (transaction_facts: the price per month of its period; a free trial
-- contributes 0). `subscriptions` counts the active chains (not FAMILY_SHARED), `in_trial` those in a free trial.
-- An introductory offer paid up front for several periods is normalised by the product's period all the same.
CREATE VIEW mrr AS
SELECT currency,
       count(*) AS subscriptions,
       count(*) FILTER (WHERE free_trial) AS in_trial,
       round(coalesce(sum(monthly_value), 0), 4) AS mrr
FROM subscription_chains_at(tollgate_now())
WHERE active AND NOT family_shared
GROUP BY currency;

-- The days from the first production auto-renewable purchase to today (UTC), each with the instant its "daily"
-- figures are taken at: the day's end, or now for today (so today's row equals the "now" view).
CREATE VIEW subscription_days AS
SELECT d::date AS day,
       least((d + interval '1 day') AT TIME ZONE 'UTC', tollgate_now()) AS instant
FROM generate_series(
    (SELECT (min(purchased_at) AT TIME ZONE 'UTC')::date FROM transaction_facts WHERE access_until IS NOT NULL),
    (tollgate_now() AT TIME ZONE 'UTC')::date,
    interval '1 day'
) AS d;

-- mrr at the end of each day (subscription_days), per currency; days without an active chain have no row.
CREATE VIEW mrr_daily AS
SELECT s.day,
       c.currency,
       count(*) AS subscriptions,
       count(*) FILTER (WHERE c.free_trial) AS in_trial,
       round(coalesce(sum(c.monthly_value), 0), 4) AS mrr
FROM subscription_days s
CROSS JOIN LATERAL subscription_chains_at(s.instant) c
WHERE c.active AND NOT c.family_shared
GROUP BY s.day, c.currency;

-- Active auto-renewable chains now (tollgate_now()), by the product of the transaction giving access:
--   subscriptions   chains a subscriber bought (not FAMILY_SHARED), trials included
--   in_trial        of them, in a free trial;  paying = subscriptions - in_trial
--   family_shared   family members' chains sharing someone's subscription (not in subscriptions)
CREATE VIEW active_subscriptions AS
SELECT product_id,
       count(*) FILTER (WHERE NOT family_shared) AS subscriptions,
       count(*) FILTER (WHERE NOT family_shared AND free_trial) AS in_trial,
       count(*) FILTER (WHERE NOT family_shared AND NOT free_trial) AS paying,
       count(*) FILTER (WHERE family_shared) AS family_shared
FROM subscription_chains_at(tollgate_now())
WHERE active
GROUP BY product_id;

-- active_subscriptions at the end of each day (subscription_days); days without an active chain have no row.
CREATE VIEW active_subscriptions_daily AS
SELECT s.day,
       c.product_id,
       count(*) FILTER (WHERE NOT c.family_shared) AS subscriptions,
       count(*) FILTER (WHERE NOT c.family_shared AND c.free_trial) AS in_trial,
       count(*) FILTER (WHERE NOT c.family_shared AND NOT c.free_trial) AS paying,
       count(*) FILTER (WHERE c.family_shared) AS family_shared
FROM subscription_days s
CROSS JOIN LATERAL subscription_chains_at(s.instant) c
WHERE c.active
GROUP BY s.day, c.product_id;

-- Free trials started per UTC day and product (free_trial transactions, not FAMILY_SHARED; a withheld repeated
-- trial counts: Apple gave it), and what became of them:
--   converted        a later paid transaction (price > 0) exists in the same chain, whatever happened to it after
--   in_trial         not converted yet and the trial not over now (tollgate_now()): still undecided
--   conversion_rate  converted / trials (recent days are low while trials are undecided: see in_trial)
CREATE VIEW trials AS
WITH started AS (
    SELECT t.purchased_at,
           t.product_id,
           t.expires_at,
           EXISTS (
               SELECT 1
               FROM transaction_facts later
               WHERE later.original_transaction_id = t.original_transaction_id
                 AND NOT later.family_shared
                 AND later.price > 0
                 AND later.purchased_at > t.purchased_at
           ) AS converted
    FROM transaction_facts t
    WHERE t.free_trial AND NOT t.family_shared
)
SELECT (purchased_at AT TIME ZONE 'UTC')::date AS day,
       product_id,
       count(*) AS trials,
       count(*) FILTER (WHERE converted) AS converted,
       count(*) FILTER (WHERE NOT converted AND expires_at > tollgate_now()) AS in_trial,
       round(count(*) FILTER (WHERE converted)::numeric / count(*), 4) AS conversion_rate
FROM started
GROUP BY 1, product_id;

-- trials per product over all time: trials started, converted, still in trial, and converted / trials.
CREATE VIEW trial_conversion AS
SELECT product_id,
       sum(trials)::bigint AS trials,
       sum(converted)::bigint AS converted,
       sum(in_trial)::bigint AS in_trial,
       round(sum(converted) / sum(trials), 4) AS conversion_rate
FROM trials
GROUP BY product_id;

-- Subscriber churn per UTC month, from the first production auto-renewable purchase's month to this one:
--   active_at_start  paying chains (active, not in a free trial, not FAMILY_SHARED) at the month's first instant
--   churned          of them, those not active at the month's end (its last instant, or now for this month, which
--                    is month-to-date): expired, refunded or revoked and not renewed by then
--   churn_rate       churned / active_at_start (NULL when none was active)
--   active_at_end    paying chains at the month's end (next month's active_at_start, for a past month)
-- A chain past its expiry in a grace period or billing retry at the month's end counts as churned.
CREATE VIEW churn_monthly AS
WITH months AS (
    SELECT m::date AS month,
           m AT TIME ZONE 'UTC' AS starts,
           least((m + interval '1 month') AT TIME ZONE 'UTC', tollgate_now()) AS ends
    FROM generate_series(
        (SELECT date_trunc('month', min(purchased_at) AT TIME ZONE 'UTC')
         FROM transaction_facts WHERE access_until IS NOT NULL),
        date_trunc('month', tollgate_now() AT TIME ZONE 'UTC'),
        interval '1 month'
    ) AS m
),
at_start AS (
    SELECT months.month, c.user_id, c.original_transaction_id
    FROM months
    CROSS JOIN LATERAL subscription_chains_at(months.starts) c
    WHERE c.active AND NOT c.family_shared AND NOT c.free_trial
),
at_end AS (
    SELECT months.month, c.user_id, c.original_transaction_id, c.free_trial
    FROM months
    CROSS JOIN LATERAL subscription_chains_at(months.ends) c
    WHERE c.active AND NOT c.family_shared
)
SELECT m.month,
       (SELECT count(*) FROM at_start s WHERE s.month = m.month) AS active_at_start,
       (SELECT count(*)
        FROM at_start s
        WHERE s.month = m.month
          AND NOT EXISTS (
              SELECT 1 FROM at_end e
              WHERE e.month = s.month
                AND e.user_id = s.user_id
                AND e.original_transaction_id = s.original_transaction_id
          )) AS churned,
       (SELECT round(count(*) FILTER (WHERE e.user_id IS NULL)::numeric / nullif(count(*), 0), 4)
        FROM at_start s
        LEFT JOIN at_end e
          ON e.month = s.month AND e.user_id = s.user_id AND e.original_transaction_id = s.original_transaction_id
        WHERE s.month = m.month) AS churn_rate,
       (SELECT count(*) FROM at_end e WHERE e.month = m.month AND NOT e.free_trial) AS active_at_end
FROM months m;

-- Refunds per UTC month and currency: paid transactions (not free, not FAMILY_SHARED) purchased in the month and
-- refunded in the month (a refund counts in the month it was refunded, like revenue_daily).
--   purchases, gross    paid transactions purchased, and their gross (an unpriced one counts as 0)
--   refunds, refunded   transactions refunded, and the amount (gross * revocation_percentage / 100000)
--   refund_rate         refunds / purchases of the same month (NULL without purchases)
CREATE VIEW refunds_monthly AS
WITH paid AS (
    SELECT * FROM transaction_facts WHERE NOT family_shared AND NOT free
),
lines AS (
    SELECT date_trunc('month', purchased_at AT TIME ZONE 'UTC')::date AS month, currency,
           1 AS purchases, coalesce(gross, 0) AS gross, 0 AS refunds, 0 AS refunded
    FROM paid
    UNION ALL
    SELECT date_trunc('month', refunded_at AT TIME ZONE 'UTC')::date, currency,
           0, 0, 1, coalesce(refunded, 0)
    FROM paid
    WHERE refunded_at IS NOT NULL
)
SELECT month,
       currency,
       sum(purchases)::bigint AS purchases,
       round(sum(gross), 4) AS gross,
       sum(refunds)::bigint AS refunds,
       round(sum(refunded), 4) AS refunded,
       round(sum(refunds)::numeric / nullif(sum(purchases), 0), 4) AS refund_rate
FROM lines
GROUP BY month, currency;

-- Family Sharing per UTC month of purchase: production transactions, those FAMILY_SHARED, and the share; the same
-- over the transactions of products that grant an entitlement (autoRenewable, nonConsumable, nonRenewing: the only
-- ones Family Sharing can share), which is the telling share.
CREATE VIEW family_share AS
WITH facts AS (
    SELECT date_trunc('month', purchased_at AT TIME ZONE 'UTC')::date AS month,
           family_shared,
           product_type IN ('autoRenewable', 'nonConsumable', 'nonRenewing') AS grants_entitlement
    FROM transaction_facts
)
SELECT month,
       count(*) AS transactions,
       count(*) FILTER (WHERE family_shared) AS family_shared,
       round(count(*) FILTER (WHERE family_shared)::numeric / count(*), 4) AS family_share,
       count(*) FILTER (WHERE grants_entitlement) AS entitlement_transactions,
       count(*) FILTER (WHERE grants_entitlement AND family_shared) AS entitlement_family_shared,
       round(count(*) FILTER (WHERE grants_entitlement AND family_shared)::numeric
             / nullif(count(*) FILTER (WHERE grants_entitlement), 0), 4) AS entitlement_family_share
FROM facts
GROUP BY month;
