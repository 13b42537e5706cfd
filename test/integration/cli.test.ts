import t from 'tap';
import { runCli, startTestService } from '../helpers/service';

t.test('instance create provisions the sandbox, the purposes and the system fields', async (t) => {
  const s = await startTestService(t);
  const created = await s.cli('instance', 'create', 'Acme-1', '--name', 'Acme', '--timezone', 'America/Santiago', '--json');
  t.equal(created.code, 0);
  t.match(created.json, { slug: 'acme-1', name: 'Acme', timezone: 'America/Santiago', is_active: true, sandbox_domain: 'acme-1.sandbox.test', sandbox_sender: 'sandbox@acme-1.sandbox.test' });
  t.equal(created.stdout.trim().split('\n').length, 1, 'exactly one JSON object');
  const db = s.svc.db;
  const purposes = db.prepare('SELECT code FROM consent_purposes WHERE instance_id = ? ORDER BY code').all(created.json.id);
  t.same(purposes, [{ code: 'marketing' }, { code: 'newsletter' }]);
  const fields = db.prepare('SELECT field_key FROM fields WHERE instance_id = ? AND is_system = 1 ORDER BY field_key').all(created.json.id);
  t.same(fields.map((f) => (f as { field_key: string }).field_key), ['ADDRESS', 'EMAIL', 'FIRST_NAME', 'LAST_NAME', 'PHONE', 'UNIQUECODE']);
  const domain = db.prepare('SELECT is_sandbox, mx_status FROM domains WHERE instance_id = ?').get(created.json.id);
  t.same(domain, { is_sandbox: 1, mx_status: 'verified' });
});

t.test('CLI failures print {code, detail} and exit non-zero', async (t) => {
  const s = await startTestService(t);
  const cases: Array<[string[], string]> = [
    [['instance', 'create', 'bad slug!'], 'validation_error'],
    [['instance', 'create', 'tz', '--timezone', 'Mars/Olympus'], 'validation_error'],
    [['instance', 'disable', 'nobody'], 'instance_not_found'],
    [['apikey', 'create', 'nobody'], 'instance_not_found'],
    [['instance', 'limits', 'nobody', '--send-limit', '5'], 'instance_not_found'],
    [['instance', 'create', 'blank', '--name', ' '], 'validation_error'],
  ];
  for (const [args, code] of cases) {
    const r = await s.cli(...args, '--json');
    t.not(r.code, 0, args.join(' '));
    t.equal(r.json.code, code, args.join(' '));
    t.type(r.json.detail, 'string');
  }
  t.equal((await s.cli('instance', 'create', 'tzcase', '--timezone', 'america/santiago', '--json')).json.timezone, 'America/Santiago', 'the canonical zone name');
  t.equal((await s.cli('instance', 'create', 'tzkyiv', '--timezone', 'Europe/Kyiv', '--json')).json.timezone, 'Europe/Kyiv', 'a renamed zone keeps its current name');
  await s.cli('instance', 'create', 'dup', '--json');
  t.equal((await s.cli('instance', 'create', 'dup', '--json')).json.code, 'instance_already_exists');
  t.equal((await s.cli('apikey', 'create', 'dup', '--name', '', '--json')).json.code, 'validation_error', 'an empty key name, as every other empty name');
  const badLimit = await s.cli('instance', 'limits', 'dup', '--send-limit', 'lots', '--json');
  t.equal(badLimit.json.code, 'validation_error');
  const badCidr = await s.cli('instance', 'limits', 'dup', '--ip-allow', '10.0.0.0/99', '--json');
  t.equal(badCidr.json.code, 'validation_error');
  const badSub = await s.cli('instance', 'limits', 'dup', '--subscription', 'maybe', '--json');
  t.equal(badSub.json.code, 'validation_error');
  // Past what the quota arithmetic can date (reset_at) or hold exactly (a double): refused here,
  // not a 500 on the next send.
  for (const opt of [['--send-cycle-days', '999999999'], ['--send-limit', '99999999999999999999999']]) {
    const r = await s.cli('instance', 'limits', 'dup', ...opt, '--json');
    t.equal(r.json.code, 'validation_error', opt.join(' '));
  }
  t.equal((await s.cli('instance', 'limits', 'dup', '--send-cycle-days', '36500', '--json')).json.send_cycle_days, 36500);
  // inet_aton's short forms ("10.1" is 10.0.0.1) are typos in an allow list, not addresses.
  for (const cidr of ['10.1', '1', '10.1/8']) {
    t.equal((await s.cli('apikey', 'create', 'dup', '--ip-allow', cidr, '--json')).json.code, 'validation_error', cidr);
  }
  t.same((await s.cli('apikey', 'create', 'dup', '--ip-allow', '10.0.0.1,::1', '--json')).json.ip_allow, ['10.0.0.1/32', '::1/128']);
  for (const args of [['--help'], ['help', 'instance'], ['domain', 'dkim', '--help']]) {
    const help = await s.cli(...args, '--json');
    t.equal(help.code, 0, args.join(' '));
    t.match(help.json, { help: /^Usage: estafeta/ }, `${args.join(' ')} --json: the help text in one JSON object`);
    t.equal(help.stdout.trim().split('\n').length, 1);
  }
  for (const args of [['template'], ['nope'], ['instance', 'create']]) {
    const usage = await s.cli(...args, '--json');
    t.not(usage.code, 0);
    t.same([usage.json.code, usage.stdout.trim().split('\n').length], ['validation_error', 1], `${args.join(' ')}: one error object`);
  }
  // A configuration mistake is the operator's, named as such (EX_CONFIG, as `npm start` exits).
  const badConfig = await runCli({ ...s.env, ESTAFETA_HTTP_PORT: 'abc' }, ['instance', 'limits', 'dup', '--json']);
  t.same([badConfig.code, badConfig.json.code], [78, 'invalid_configuration']);
  t.match(badConfig.json.detail, /ESTAFETA_HTTP_PORT/);
});

t.test('instance limits shows and changes the limits, with the defaults of CONTRACT §6', async (t) => {
  const s = await startTestService(t);
  await s.cli('instance', 'create', 'lim', '--json');
  const shown = await s.cli('instance', 'limits', 'lim', '--json');
  t.same(shown.json, {
    slug: 'lim', send_limit: null, send_cycle_days: 30, max_domains: null, max_senders: null, attachment_max_bytes: 1048576,
    bandwidth_bytes_per_second: null, bandwidth_burst_bytes: null, ip_allow: [], subscription: 'active', scoped_keys: 'allowed',
  });
  const changed = await s.cli('instance', 'limits', 'lim', '--send-limit', '100', '--send-cycle-days', '7', '--attachment-max-bytes', '2048',
    '--bandwidth-bytes-per-second', '1000', '--bandwidth-burst-bytes', '5000', '--ip-allow', '10.0.0.0/8,2001:db8::/32', '--subscription', 'inactive', '--json');
  t.match(changed.json, { send_limit: 100, send_cycle_days: 7, attachment_max_bytes: 2048, bandwidth_bytes_per_second: 1000, bandwidth_burst_bytes: 5000,
    ip_allow: ['10.0.0.0/8', '2001:db8::/32'], subscription: 'inactive' });
  const reset = await s.cli('instance', 'limits', 'lim', '--send-limit', 'none', '--ip-allow', 'none', '--json');
  t.match(reset.json, { send_limit: null, ip_allow: [] });
});

t.test('sender add on the sandbox domain and on an unverified domain', async (t) => {
  const s = await startTestService(t);
  const { slug } = await s.tenant();
  const ok = await s.cli('sender', 'add', slug, `news@${slug}.sandbox.test`, '--name', 'News', '--consent', 'marketing:opt_in', '--json');
  t.equal(ok.code, 0);
  t.match(ok.json, { email_address: `news@${slug}.sandbox.test`, name: 'News', domain_is_verified: true, is_consent_required: true });
  t.equal((await s.cli('sender', 'add', slug, `news@${slug}.sandbox.test`, '--json')).json.code, 'sender_already_exists');
  t.equal((await s.cli('domain', 'add', slug, 'Brand.Example.', '--json')).json.domain, 'brand.example');
  t.equal((await s.cli('sender', 'add', slug, 'hi@brand.example', '--json')).json.code, 'domain_not_verified');
  const both = await s.cli('sender', 'consent', slug, `news@${slug}.sandbox.test`, '--none', '--consent', 'marketing:opt_in', '--json');
  t.equal(both.json.code, 'validation_error', '--none with --consent is a contradiction, not a silent choice');
  const none = await s.cli('sender', 'consent', slug, `news@${slug}.sandbox.test`, '--none', '--json');
  t.equal(none.json.is_consent_required, false);
});

t.test('concurrent CLI runs: one create per slug, one domain past a quota of one, two rotations make two steps', async (t) => {
  const s = await startTestService(t);
  const creates = await Promise.all([1, 2, 3].map(() => s.cli('instance', 'create', 'race', '--json')));
  t.same(creates.map((r) => r.code === 0 ? 'ok' : r.json.code).sort(), ['instance_already_exists', 'instance_already_exists', 'ok']);
  await s.cli('instance', 'limits', 'race', '--max-domains', '1', '--json');
  const adds = await Promise.all(['a', 'b', 'c'].map((d) => s.cli('domain', 'add', 'race', `${d}.race.example`, '--json')));
  t.same(adds.map((r) => r.code === 0 ? 'ok' : r.json.code).sort(),
    ['ok', 'plan_custom_domains_limit_exceeded', 'plan_custom_domains_limit_exceeded'], 'the quota holds against concurrent adds');
  await s.cli('instance', 'limits', 'race', '--max-domains', 'none', '--json');
  const same = await Promise.all([1, 2, 3].map(() => s.cli('domain', 'add', 'race', 'same.race.example', '--json')));
  t.same(same.map((r) => r.code === 0 ? 'ok' : r.json.code).sort(), ['domain_already_exists', 'domain_already_exists', 'ok']);
  const rotations = await Promise.all([1, 2].map(() => s.cli('domain', 'dkim', 'rotate', 'race', 'same.race.example', '--json')));
  t.same(rotations.map((r) => r.code), [0, 0]);
  const dkim = await s.cli('domain', 'dkim', 'race', 'same.race.example', '--json');
  t.equal(dkim.json.active_selector, 's1', 's1 -> s2 -> s1');
  const short = await s.cli('domain', 'dkim', 'rotate', 'race', '--json');
  t.same([short.json.code, short.json.errors?.[0]?.pointer], ['validation_error', '/domain'], 'rotate without its domain is a usage error, not instance "rotate"');
  for (const [args, pointer] of [[['race'], '/domain'], [[], '/slug'], [['rotate'], '/slug']] as const) {
    const r = await s.cli('domain', 'dkim', ...args, '--json');
    t.same([r.code, r.json.code, r.json.errors?.[0]?.pointer], [1, 'validation_error', pointer], `domain dkim ${args.join(' ')}: names the missing argument`);
  }
  const extra = await s.cli('domain', 'dkim', 'race', 'same.race.example', 'extra', '--json');
  t.same([extra.code, extra.json.code], [1, 'validation_error'], 'an extra word is refused as by every other command');
});
