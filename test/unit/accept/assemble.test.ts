import t from 'tap';
import { foldableValue } from '../../../src/accept/assemble';

// nodemailer writes message ids and structured fields as they are: an encoded word inside one is
// literal text, and a long Content-ID encoded broke every cid: link to it.
t.test('message-id and structured headers are never RFC 2047-encoded, however long; text headers are', async (t) => {
  const id = `<${'a'.repeat(90)}@example.test>`;
  for (const name of ['In-Reply-To', 'References', 'Content-ID', 'OTP-Token']) t.equal(foldableValue(name, id), id, name);
  t.match(foldableValue('X-Long', 'a'.repeat(90)), /^=\?UTF-8\?B\?/, 'a text header with an unbreakable word is encoded');
});
