/**
 * Public tracking endpoints (no credentials, CONTRACT §6): the open pixel, the click redirect and
 * the unsubscribe link of delivered mails. Every link is HMAC-signed per mail (tracking/links.ts):
 * a bad signature is a 404 `link_not_found`, and a click redirects only to the URL signed for that mail.
 */
import Router from '@koa/router';
import type { AppState } from '../api';
import type { HttpDeps } from '../deps';
import { ServiceError } from '../../errors';
import { trackingSecret, verifyLink } from '../../tracking/links';
import { findMail, recordEngagement, unsubscribeRecipient } from '../../tracking/events';

/** The smallest transparent GIF. */
const pixel = Buffer.from('R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7', 'base64');
// The route exists: the spec keeps the generic not_found for unknown routes (Errors).
const notFound = (): ServiceError => new ServiceError('link_not_found', 'No such link.');

const page = (title: string, body: string): string =>
  `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${title}</title></head><body><h1>${title}</h1>${body}</body></html>`;

/**
 * The Location of a click: the link exactly as the mail had it (the reports show it so too),
 * not as a URL parser re-serializes it (Koa's redirect turns `https://example.com` into
 * `https://example.com/`). Only a link with characters a header cannot carry (spaces, non-ASCII)
 * is percent-encoded by the WHATWG parser; CR/LF never reach a header either way.
 */
function locationOf(url: string): string | null {
  if (/^[\x21-\x7e]+$/.test(url)) return url;
  try {
    return new URL(url).href;
  } catch {
    return null;
  }
}

export function trackingRoutes({ db, config }: HttpDeps): Router<AppState> {
  const router = new Router<AppState>({ prefix: '/t', sensitive: true });
  const secret = trackingSecret(config.dataDir);

  router.get('/o/:mailId/:file', (ctx) => {
    const sig = ctx.params.file.replace(/\.gif$/, '');
    const mail = verifyLink(secret, 'o', ctx.params.mailId, sig) ? findMail(db, ctx.params.mailId) : undefined;
    if (!mail) throw notFound();
    // A HEAD (a link checker, a proxy probing the image) is no one opening the mail.
    if (ctx.method === 'GET') recordEngagement(db, mail, 'open', null, Date.now());
    ctx.set('Cache-Control', 'no-store, max-age=0');
    ctx.type = 'image/gif';
    ctx.body = pixel;
  });

  router.get('/c/:mailId/:sig', (ctx) => {
    const url = typeof ctx.query.u === 'string' ? ctx.query.u : '';
    const ok = /^https?:\/\//i.test(url) && verifyLink(secret, 'c', ctx.params.mailId, ctx.params.sig, url);
    const location = ok ? locationOf(url) : null;
    const mail = location ? findMail(db, ctx.params.mailId) : undefined;
    if (!mail || !location) throw notFound();
    if (ctx.method === 'GET') recordEngagement(db, mail, 'click', url, Date.now());
    ctx.set('Cache-Control', 'no-store, max-age=0');
    ctx.status = 302;
    ctx.set('Location', location);
    ctx.type = 'text/plain';
    ctx.body = 'Redirecting.';
  });

  // GET shows a confirmation form: link scanners fetch GETs, so only the POST unsubscribes (RFC 8058 §2).
  router.get('/u/:mailId/:sig', (ctx) => {
    if (!verifyLink(secret, 'u', ctx.params.mailId, ctx.params.sig) || !findMail(db, ctx.params.mailId)) throw notFound();
    ctx.type = 'text/html';
    ctx.body = page('Unsubscribe', `<form method="post"><input type="hidden" name="List-Unsubscribe" value="One-Click"><button type="submit">Unsubscribe</button></form>`);
  });

  router.post('/u/:mailId/:sig', (ctx) => {
    const mail = verifyLink(secret, 'u', ctx.params.mailId, ctx.params.sig) ? findMail(db, ctx.params.mailId) : undefined;
    if (!mail) throw notFound();
    unsubscribeRecipient(db, mail, 'one-click', Date.now());
    ctx.type = 'text/html';
    ctx.body = page('Unsubscribed', '<p>You will not receive these emails any more.</p>');
  });
  return router;
}
