/**
 * The first schema: every aggregate the spec names. Times are epoch milliseconds (INTEGER);
 * JSON-valued columns are TEXT holding JSON. Every tenant table carries instance_id.
 */
export const version = 1;
export const name = 'initial';
export const sql = `
CREATE TABLE instances (
  id INTEGER PRIMARY KEY,
  slug TEXT NOT NULL UNIQUE,
  name TEXT NOT NULL,
  timezone TEXT NOT NULL DEFAULT 'UTC',
  is_active INTEGER NOT NULL DEFAULT 1,
  subscription_active INTEGER NOT NULL DEFAULT 1,
  send_limit INTEGER,
  send_cycle_days INTEGER NOT NULL DEFAULT 30,
  cycle_anchor_at INTEGER NOT NULL,
  max_domains INTEGER,
  max_senders INTEGER,
  attachment_max_bytes INTEGER NOT NULL DEFAULT 1048576,
  bandwidth_bytes_per_second INTEGER,
  bandwidth_burst_bytes INTEGER,
  ip_allow TEXT NOT NULL DEFAULT '[]',
  scoped_keys_allowed INTEGER NOT NULL DEFAULT 1,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);

CREATE TABLE api_keys (
  id INTEGER PRIMARY KEY,
  instance_id INTEGER NOT NULL REFERENCES instances(id),
  key_id TEXT NOT NULL UNIQUE,
  name TEXT,
  token_hash BLOB NOT NULL,
  access_type TEXT NOT NULL CHECK (access_type IN ('all', 'scoped')),
  scopes TEXT NOT NULL DEFAULT '[]',
  ip_allow TEXT NOT NULL DEFAULT '[]',
  revoked_at INTEGER,
  created_at INTEGER NOT NULL
);

CREATE TABLE domains (
  id INTEGER PRIMARY KEY,
  instance_id INTEGER NOT NULL REFERENCES instances(id),
  domain TEXT NOT NULL,
  is_sandbox INTEGER NOT NULL DEFAULT 0,
  ownership_token TEXT NOT NULL UNIQUE,
  ownership_verified_at INTEGER,
  mx_status TEXT NOT NULL DEFAULT 'pending',
  spf_status TEXT NOT NULL DEFAULT 'pending',
  dkim_status TEXT NOT NULL DEFAULT 'pending',
  dmarc_status TEXT NOT NULL DEFAULT 'pending',
  mx_verified_at INTEGER,
  spf_verified_at INTEGER,
  dkim_verified_at INTEGER,
  dmarc_verified_at INTEGER,
  last_verification_at INTEGER,
  deleted_at INTEGER,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  UNIQUE (instance_id, domain)
);

CREATE TABLE dkim_keys (
  id INTEGER PRIMARY KEY,
  domain_id INTEGER NOT NULL REFERENCES domains(id),
  selector TEXT NOT NULL CHECK (selector IN ('s1', 's2')),
  private_key TEXT NOT NULL,
  public_key TEXT NOT NULL,
  is_active INTEGER NOT NULL DEFAULT 0,
  created_at INTEGER NOT NULL,
  UNIQUE (domain_id, selector)
);

CREATE TABLE consent_purposes (
  id INTEGER PRIMARY KEY,
  instance_id INTEGER NOT NULL REFERENCES instances(id),
  code TEXT NOT NULL,
  name TEXT NOT NULL,
  description TEXT,
  is_enabled INTEGER NOT NULL DEFAULT 1,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  UNIQUE (instance_id, code)
);

CREATE TABLE senders (
  id INTEGER PRIMARY KEY,
  instance_id INTEGER NOT NULL REFERENCES instances(id),
  domain_id INTEGER NOT NULL REFERENCES domains(id),
  name TEXT NOT NULL,
  email_address TEXT NOT NULL,
  is_consent_required INTEGER NOT NULL DEFAULT 0,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  UNIQUE (instance_id, email_address)
);

CREATE TABLE sender_purposes (
  sender_id INTEGER NOT NULL REFERENCES senders(id) ON DELETE CASCADE,
  purpose_id INTEGER NOT NULL REFERENCES consent_purposes(id),
  mode TEXT NOT NULL CHECK (mode IN ('opt_in', 'opt_out')),
  PRIMARY KEY (sender_id, purpose_id)
);

CREATE TABLE templates (
  id INTEGER PRIMARY KEY,
  instance_id INTEGER NOT NULL REFERENCES instances(id),
  name TEXT NOT NULL,
  subject TEXT,
  status TEXT NOT NULL DEFAULT 'draft' CHECK (status IN ('draft', 'public')),
  description TEXT,
  provider TEXT NOT NULL DEFAULT 'ckeditor' CHECK (provider IN ('bee', 'ckeditor')),
  html TEXT,
  text TEXT,
  config TEXT,
  deleted_at INTEGER,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE INDEX templates_by_instance ON templates (instance_id, id);

CREATE TABLE fields (
  id INTEGER PRIMARY KEY,
  instance_id INTEGER NOT NULL REFERENCES instances(id),
  name TEXT NOT NULL,
  field_key TEXT NOT NULL,
  type TEXT NOT NULL,
  is_system INTEGER NOT NULL DEFAULT 0,
  is_active INTEGER NOT NULL DEFAULT 1,
  config TEXT,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  UNIQUE (instance_id, field_key)
);

CREATE TABLE forms (
  id INTEGER PRIMARY KEY,
  instance_id INTEGER NOT NULL REFERENCES instances(id),
  name TEXT NOT NULL,
  kind TEXT NOT NULL CHECK (kind IN ('consent', 'advanced')),
  type TEXT NOT NULL CHECK (type IN ('acquisition', 'update')),
  dataset_id INTEGER,
  public_token TEXT NOT NULL UNIQUE,
  is_default INTEGER NOT NULL DEFAULT 0,
  is_active INTEGER NOT NULL DEFAULT 1,
  settings TEXT,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);

CREATE TABLE form_items (
  id INTEGER PRIMARY KEY,
  form_id INTEGER NOT NULL REFERENCES forms(id) ON DELETE CASCADE,
  position INTEGER NOT NULL,
  kind TEXT NOT NULL CHECK (kind IN ('field', 'consent', 'separator', 'text')),
  field_id INTEGER REFERENCES fields(id),
  term_id INTEGER,
  label TEXT,
  is_required INTEGER NOT NULL DEFAULT 0,
  config TEXT
);

CREATE TABLE consent_terms (
  id INTEGER PRIMARY KEY,
  instance_id INTEGER NOT NULL REFERENCES instances(id),
  name TEXT NOT NULL,
  type TEXT NOT NULL,
  channels TEXT NOT NULL,
  is_active INTEGER NOT NULL DEFAULT 1,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);

CREATE TABLE consent_term_purposes (
  term_id INTEGER NOT NULL REFERENCES consent_terms(id) ON DELETE CASCADE,
  purpose_id INTEGER NOT NULL REFERENCES consent_purposes(id),
  PRIMARY KEY (term_id, purpose_id)
);

CREATE TABLE consent_term_versions (
  id INTEGER PRIMARY KEY,
  term_id INTEGER NOT NULL REFERENCES consent_terms(id) ON DELETE CASCADE,
  version TEXT NOT NULL,
  body TEXT NOT NULL,
  document_url TEXT,
  is_current INTEGER NOT NULL DEFAULT 0,
  published_at INTEGER,
  created_at INTEGER NOT NULL
);
CREATE UNIQUE INDEX one_current_version ON consent_term_versions (term_id) WHERE is_current = 1;

CREATE TABLE consent_events (
  id INTEGER PRIMARY KEY,
  instance_id INTEGER NOT NULL REFERENCES instances(id),
  term_id INTEGER NOT NULL REFERENCES consent_terms(id),
  term_version_id INTEGER NOT NULL REFERENCES consent_term_versions(id),
  status TEXT NOT NULL,
  method TEXT NOT NULL,
  source TEXT NOT NULL,
  confirmed_at INTEGER,
  expired_at INTEGER,
  created_at INTEGER NOT NULL
);
CREATE INDEX consent_events_by_instance ON consent_events (instance_id, id);

CREATE TABLE consent_rules (
  id INTEGER PRIMARY KEY,
  event_id INTEGER NOT NULL REFERENCES consent_events(id),
  instance_id INTEGER NOT NULL REFERENCES instances(id),
  channel TEXT NOT NULL,
  contact_type TEXT NOT NULL,
  contact TEXT NOT NULL,
  purpose_id INTEGER NOT NULL REFERENCES consent_purposes(id),
  action TEXT NOT NULL CHECK (action IN ('allow', 'deny')),
  created_at INTEGER NOT NULL
);
CREATE INDEX consent_rules_by_contact ON consent_rules (instance_id, contact, channel, purpose_id, id);
CREATE INDEX consent_rules_by_event ON consent_rules (event_id);

CREATE TABLE suppressions (
  id INTEGER PRIMARY KEY,
  instance_id INTEGER NOT NULL REFERENCES instances(id),
  list TEXT NOT NULL CHECK (list IN ('restrictions', 'unsubscribes', 'complaints')),
  recipient TEXT NOT NULL,
  reason TEXT,
  source TEXT NOT NULL DEFAULT 'manual',
  mail_id TEXT,
  created_at INTEGER NOT NULL,
  UNIQUE (instance_id, list, recipient)
);
CREATE INDEX suppressions_by_recipient ON suppressions (instance_id, recipient);

CREATE TABLE categories (
  id INTEGER PRIMARY KEY,
  instance_id INTEGER NOT NULL REFERENCES instances(id),
  slug TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  UNIQUE (instance_id, slug)
);

-- One row per accepted send: the message bytes live once in the spool.
CREATE TABLE messages (
  id INTEGER PRIMARY KEY,
  msg_id TEXT NOT NULL UNIQUE,
  instance_id INTEGER NOT NULL REFERENCES instances(id),
  sender_id INTEGER,
  sender_email TEXT,
  envelope_from TEXT,
  subject TEXT NOT NULL,
  spool_file TEXT NOT NULL,
  size INTEGER NOT NULL,
  attachment_bytes INTEGER NOT NULL DEFAULT 0,
  category TEXT,
  custom_msg_id TEXT,
  custom_group_code TEXT,
  test_mode INTEGER NOT NULL DEFAULT 0,
  door TEXT NOT NULL,
  pending INTEGER NOT NULL,
  received_at INTEGER NOT NULL
);

-- One row per recipient. Copies of message columns keep list queries on one table.
CREATE TABLE mails (
  id INTEGER PRIMARY KEY,
  mail_id TEXT NOT NULL UNIQUE,
  message_id INTEGER NOT NULL REFERENCES messages(id),
  instance_id INTEGER NOT NULL REFERENCES instances(id),
  msg_id TEXT NOT NULL,
  rcpt TEXT NOT NULL,
  rcpt_domain TEXT NOT NULL,
  rcpt_kind TEXT NOT NULL DEFAULT 'to',
  subject TEXT NOT NULL,
  sender_id INTEGER,
  sender_email TEXT,
  custom_msg_id TEXT,
  custom_group_code TEXT,
  status INTEGER NOT NULL,
  charged INTEGER NOT NULL DEFAULT 1,
  opens INTEGER NOT NULL DEFAULT 0,
  clicks INTEGER NOT NULL DEFAULT 0,
  attempts INTEGER NOT NULL DEFAULT 0,
  next_attempt_at INTEGER,
  received_at INTEGER NOT NULL,
  queued_at INTEGER,
  schedule_at INTEGER,
  sent_at INTEGER,
  final_at INTEGER
);
CREATE INDEX mails_by_received ON mails (instance_id, received_at);
CREATE INDEX mails_by_rcpt ON mails (instance_id, rcpt, received_at);
CREATE INDEX mails_by_msg ON mails (instance_id, msg_id);
CREATE INDEX mails_by_message ON mails (message_id);
CREATE INDEX mails_due ON mails (next_attempt_at) WHERE status IN (2, 5);

CREATE TABLE mail_logs (
  id INTEGER PRIMARY KEY,
  mail_row INTEGER NOT NULL REFERENCES mails(id) ON DELETE CASCADE,
  at INTEGER NOT NULL,
  event TEXT NOT NULL,
  status INTEGER,
  detail TEXT,
  response TEXT
);
CREATE INDEX mail_logs_by_mail ON mail_logs (mail_row, id);

-- Engagement: one row per open or click.
CREATE TABLE mail_events (
  id INTEGER PRIMARY KEY,
  mail_row INTEGER NOT NULL REFERENCES mails(id) ON DELETE CASCADE,
  instance_id INTEGER NOT NULL,
  kind TEXT NOT NULL CHECK (kind IN ('open', 'click')),
  url TEXT,
  at INTEGER NOT NULL
);
CREATE INDEX mail_events_by_mail ON mail_events (mail_row, kind);
CREATE INDEX mail_events_by_instance ON mail_events (instance_id, kind, at);

-- Sends charged per instance and cycle (plan quota).
CREATE TABLE send_usage (
  instance_id INTEGER NOT NULL REFERENCES instances(id),
  cycle_start INTEGER NOT NULL,
  sent INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (instance_id, cycle_start)
);
`;
