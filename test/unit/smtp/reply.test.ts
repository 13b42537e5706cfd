import t from 'tap';
import { ServiceError, validationError } from '../../../src/errors';
import { completeReply, smtpError } from '../../../src/smtp/reply';

t.test('a ServiceError becomes its catalog reply, the text starting with the enhanced code and the spec code', async (t) => {
  const cases: Array<[ServiceError, number, RegExp]> = [
    [new ServiceError('sender_not_found', 'Sender x is not registered.'), 550, /^5\.7\.1 sender_not_found Sender x is not registered\.$/],
    [new ServiceError('sandbox_relay_restricted', 'no'), 550, /^5\.7\.1 sandbox_relay_restricted /],
    [new ServiceError('domain_sender_not_verified', 'no'), 550, /^5\.7\.1 domain_sender_not_verified /],
    [new ServiceError('plan_send_limit_exceeded', 'no'), 550, /^5\.7\.0 plan_send_limit_exceeded /],
    [new ServiceError('subscription_inactive', 'no'), 550, /^5\.7\.0 subscription_inactive /],
    [new ServiceError('rate_limit_exceeded', 'no'), 451, /^4\.7\.0 rate_limit_exceeded /],
    [new ServiceError('request_too_large', 'no'), 552, /^5\.3\.4 request_too_large /],
    [new ServiceError('forbidden', 'no'), 535, /^5\.7\.8 forbidden /],
    [validationError([{ pointer: '/subject', code: 'string_too_long', message: 'too long' }]), 554, /^5\.6\.0 validation_error .*\/subject: too long$/],
  ];
  for (const [err, code, text] of cases) {
    const { reply, unexpected } = smtpError(err);
    t.equal(reply.responseCode, code, err.code);
    t.match(reply.message, text, err.code);
    t.equal(unexpected, false);
  }
});

t.test('anything unexpected is 451 4.3.0 internal_error, flagged for logging, without its internal text', async (t) => {
  const { reply, unexpected } = smtpError(new TypeError('secret internals'));
  t.equal(reply.responseCode, 451);
  t.match(reply.message, /^4\.3\.0 internal_error /);
  t.notMatch(reply.message, /secret/);
  t.equal(unexpected, true);
});

t.test('reply text stays on one line', async (t) => {
  t.notMatch(smtpError(new ServiceError('sender_not_found', 'a\r\nb')).reply.message, /[\r\n]/);
});

t.test("smtp-server's own replies get an enhanced code once; ours are left alone", async (t) => {
  t.equal(completeReply(552, 'Error: message exceeds fixed maximum message size 15728640'), '5.3.4 request_too_large message exceeds fixed maximum message size 15728640');
  t.equal(completeReply(503, 'Error: need RCPT command'), '5.5.1 need RCPT command');
  t.equal(completeReply(421, 'Timeout - closing connection'), '4.3.2 Timeout - closing connection');
  t.equal(completeReply(550, '5.7.1 sender_not_found x'), '5.7.1 sender_not_found x');
  t.equal(completeReply(250, 'Accepted'), 'Accepted');
  t.equal(completeReply(599, 'odd'), '5.0.0 odd');
});
