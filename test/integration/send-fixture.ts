/**
 * Shared set-up of the send and mail-list tests: the real service with one instance, its sandbox
 * sender, and a send() that posts a valid body with overrides.
 */
import { startTestService, type TapLike, type TestService } from '../helpers/service';

export interface SendFixture {
  s: TestService;
  slug: string;
  sender: string;
  /** An address of the sandbox domain (the only place a sandbox sender may send to). */
  rcpt: (local: string) => string;
  send: (overrides?: Record<string, unknown>, opts?: { headers?: Record<string, string> }) => Promise<{ status: number; body: any; headers: Headers }>;
}

export async function sendFixture(t: TapLike, env: Record<string, string> = {}): Promise<SendFixture> {
  const s = await startTestService(t, env);
  const { slug } = await s.tenant();
  const sender = `sandbox@${slug}.sandbox.test`;
  const rcpt = (local: string): string => `${local}@${slug}.sandbox.test`;
  const send: SendFixture['send'] = (overrides = {}, opts = {}) => {
    const body: Record<string, unknown> = { sender_email: sender, to: [{ email: rcpt('ana') }], subject: 'Hello', html: '<p>Hello</p>', ...overrides };
    for (const [k, v] of Object.entries(body)) if (v === undefined) delete body[k];
    return s.api('POST', '/v1/mails/send', { body, headers: opts.headers });
  };
  return { s, slug, sender, rcpt, send };
}
