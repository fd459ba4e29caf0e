import type { Generated } from "kysely";

/** Tables of the store (SQLite, or PostgreSQL: the same migrations). JSON columns hold text; 64-bit numbers read as numbers. */
export interface Database {
  schema_version: { version: number; name: string; applied_at: number };
  users: {
    name: string;
    password_hash: string;
    /** JSON array of role names. */
    roles: string;
    email: string | null;
    created_at: number;
    /** JSON array of group names. */
    groups: Generated<string>;
    /** 1 when the user may not log in and its tokens stop working. */
    disabled: Generated<number>;
    updated_at: number | null;
  };
  tokens: {
    /** SHA-256 of the token, hex. The token itself is never stored. */
    hash: string;
    user_name: string;
    /**
     * JSON array of the roles the user had at login: a record only. Requests read the roles from
     * the current user record, so a change applies at the next request.
     */
    roles: string;
    source: string;
    created_at: number;
    last_used_at: number;
    expires_at: number;
    revoked_at: number | null;
    /** A directory login's Loupe groups (JSON array), re-read at an interval; null for other tokens. */
    groups: string | null;
    groups_at: number | null;
  };
  audit: {
    id: Generated<number>;
    type: string;
    change: string;
    user_id: string;
    timestamp: number;
    /** JSON object of string to string. */
    content: string;
    /** 1 for SUCCESS, else 0 (kept for stores written before `outcome`). */
    success: number;
    /** PENDING, SUCCESS, FAILURE or UNKNOWN (see AuditOutcome). */
    outcome: Generated<string>;
  };
  topic_metadata: {
    cluster: string;
    topic: string;
    key_type: string;
    value_type: string;
    key_schema: string | null;
    value_schema: string | null;
    updated_by: string;
    updated_at: number;
  };
  alert_notifications: {
    id: Generated<number>;
    alert_id: number;
    cluster: string;
    /** JSON object of string to string. */
    labels: string;
    /** JSON object of string to string. */
    annotations: string;
    starts_at: number;
    ends_at: number | null;
    generator_url: string;
    /** The notification's public id (in its generatorURL and the API). */
    uid: string;
    /** What a raised condition is about; null for an event. At most one active per fingerprint. */
    fingerprint: string | null;
  };
  /** A setting's state, once set (else the shipped default). */
  alert_settings: {
    cluster: string;
    alert_id: number;
    enabled: number;
    updated_by: string;
    updated_at: number;
  };
  alert_conditions: {
    id: string;
    cluster: string;
    alert_id: number;
    expression: string;
    updated_by: string;
    updated_at: number;
  };
  /** The outbox: one row per notification and channel (see migration 0011). */
  alert_deliveries: {
    notification_id: number;
    channel: string;
    version: number;
    sent_version: Generated<number>;
    attempts: Generated<number>;
    next_attempt_at: number;
    first_pending_at: number;
    last_error: string | null;
    sent_at: number | null;
    given_up_version: number | null;
  };
  user_profile: {
    user_name: string;
    /** topics, schemas, transformers, or any name a client uses. */
    property: string;
    value: string;
    created_at: number;
  };
  sql_history: {
    id: Generated<number>;
    user_name: string;
    cluster: string;
    text: string;
    ran_at: number;
    rows: number | null;
    stop_reason: string | null;
  };
  sql_saved: {
    user_name: string;
    name: string;
    text: string;
    created_at: number;
    updated_at: number;
  };
  groups: {
    name: string;
    /** JSON arrays of text: roles, cluster names (or `*`), allow and deny patterns. */
    roles: string;
    clusters: string;
    topics_allow: string;
    topics_deny: string;
    created_at: number;
    updated_at: number;
  };
  service_accounts: {
    name: string;
    /** SHA-256 of the secret, hex: the secret is random (256 bits), shown once and never stored. */
    secret_hash: string;
    /** JSON array of group names. */
    groups: string;
    expires_at: number | null;
    disabled: number;
    created_by: string;
    created_at: number;
    updated_at: number;
    last_used_at: number | null;
  };
  processors: {
    /** `lsql_<hex>`, as the real clients expect. */
    id: string;
    name: string;
    cluster: string;
    sql: string;
    runners: number;
    /** RUNNING or PAUSED. */
    desired: string;
    owner: string;
    source_topic: string;
    target_topic: string;
    /** Accepted and kept for other execution modes (CLIENTS.md); unused in IN_PROC. */
    cluster_name: string | null;
    namespace: string | null;
    pipeline: string | null;
    created_at: number;
    /** When it last started running (create, resume); null while paused. */
    start_ts: number | null;
    stop_ts: number | null;
    last_action: string | null;
    /** local, ldap or service: where the owner's rights are resolved from (null: created before it was kept). */
    owner_kind: string | null;
    /** Why Loupe paused it by itself (owner's access gone, a risky runner of a dead instance). */
    paused_reason: string | null;
    updated_at: number;
  };
  processor_runners: {
    processor_id: string;
    runner: number;
    instance: string | null;
    lease_until: number;
    /** PENDING, RUNNING, FAILED or STOPPED, as the runner last reported it. */
    state: string;
    error: string | null;
    /** JSON RunnerFigures. */
    figures: string | null;
    /** Set by the running instance before a phase that may exhaust its memory; cleared after. */
    risk: string | null;
    updated_at: number;
  };
  /** Named leases (src/db/lease.ts): one instance of those sharing the store runs the job. */
  leases: {
    name: string;
    holder: string | null;
    /** Epoch milliseconds on the store's clock. */
    lease_until: number;
  };
  /** What an instance tells the others sharing the store (src/db/instance-events.ts); kept minutes. */
  instance_events: {
    id: Generated<number>;
    /** Epoch milliseconds on the store's clock. */
    at: number;
    instance: string;
    kind: string;
    /** JSON. */
    body: string;
  };
  /** Consumer lag history (src/lag/history-store.ts): one series per cluster, group and topic ('' for the group's total). */
  lag_series: {
    id: Generated<number>;
    cluster: string;
    group_name: string;
    topic: string;
  };
  /** One row per series and sample, kept a day. */
  lag_points: {
    series_id: number;
    /** Epoch ms of the sample. */
    t: number;
    lag: number;
    /** Age of the oldest unread record (ms); null when unknown. */
    lag_ms: number | null;
  };
  /** One row per series and hour, kept 30 days. */
  lag_hours: {
    series_id: number;
    /** Epoch ms of the hour's start. */
    t: number;
    lag_min: number;
    lag_max: number;
    lag_ms_max: number | null;
    samples: number;
  };
  /** Data masking policies (src/domains/masking). JSON arrays of text: topics, fields, groups, roles, except_groups. */
  masking_policies: {
    name: string;
    topics: string;
    fields: string;
    /** REDACT, HASH, KEEP_LAST_N or REMOVE. */
    method: string;
    /** REDACT's constant; null for the other methods. */
    replacement: string | null;
    /** KEEP_LAST_N's count; null for the other methods. */
    keep_last: number | null;
    groups: string;
    roles: string;
    except_groups: string;
    created_at: number;
    updated_at: number;
  };
  /** One row (id 1): the install's salt of the HASH method, never answered or logged. */
  masking_salt: {
    id: number;
    salt: string;
  };
}
