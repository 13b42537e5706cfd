import t from 'tap';
import { decodeEncodedWords, isPrivateHeader, stripHeaderFields } from '../../../src/smtp/raw-headers';

const strip = (text: string): string => stripHeaderFields(Buffer.from(text, 'latin1'), isPrivateHeader).toString('latin1');

t.test('X-Svc-* and Bcc fields go with their continuation lines; the rest stays byte for byte', async (t) => {
  const cases: Array<[string, string, string]> = [
    ['one field', 'From: a@b.test\r\nX-Svc-Category: news\r\nSubject: s\r\n\r\nbody\r\n', 'From: a@b.test\r\nSubject: s\r\n\r\nbody\r\n'],
    ['any case', 'x-svc-TEST-mode: true\r\nX-SVC-other: 1\r\nTo: c@d.test\r\n\r\nb', 'To: c@d.test\r\n\r\nb'],
    ['folded with spaces and tabs', 'Bcc: a@b.test,\r\n  c@d.test,\r\n\te@f.test\r\nSubject: s\r\n\r\nb', 'Subject: s\r\n\r\nb'],
    ['a kept folded field', 'Subject: a\r\n b\r\nX-Svc-Group-Code:\r\n g\r\n\r\nb', 'Subject: a\r\n b\r\n\r\nb'],
    ['bare LF line ends', 'X-Svc-Custom-Msg-Id: 1\nSubject: s\n\nX-Svc-Custom-Msg-Id: in body\n', 'Subject: s\n\nX-Svc-Custom-Msg-Id: in body\n'],
    ['only the header section is touched', 'Subject: s\r\n\r\nBcc: not a header here\r\n', 'Subject: s\r\n\r\nBcc: not a header here\r\n'],
    ['a message without a body', 'Subject: s\r\nX-Svc-Category: c\r\n', 'Subject: s\r\n'],
    ['names that only look alike stay', 'X-Svcs: 1\r\nBcc-Like: 2\r\nX-Svc: 3\r\n\r\n', 'X-Svcs: 1\r\nBcc-Like: 2\r\nX-Svc: 3\r\n\r\n'],
    ['8-bit header bytes survive', 'Subject: caf\xc3\xa9\r\nX-Svc-Category: caf\xc3\xa9\r\n\r\n\xff', 'Subject: caf\xc3\xa9\r\n\r\n\xff'],
  ];
  for (const [name, input, expected] of cases) t.equal(strip(input), expected, name);
});

t.test('a message with nothing to strip is returned as the same buffer', async (t) => {
  const raw = Buffer.from('Subject: s\r\n\r\nbody');
  t.equal(stripHeaderFields(raw, isPrivateHeader), raw);
});

t.test('RFC 2047 encoded words are decoded, adjacent ones joined', async (t) => {
  const cases: Array<[string, string]> = [
    ['=?UTF-8?Q?R=C3=A9union_Mensuelle?=', 'Réunion Mensuelle'],
    ['=?utf-8?B?UsOpdW5pb24=?=', 'Réunion'],
    ['=?ISO-8859-1?Q?caf=E9?= au lait', 'café au lait'],
    ['=?UTF-8?Q?a?= =?UTF-8?Q?b?=', 'ab'],
    ['=?UTF-8*fr?Q?oui?=', 'oui'],
    ['plain text', 'plain text'],
    ['=?no-such-charset?Q?x?=', 'x'],
  ];
  for (const [input, expected] of cases) t.equal(decodeEncodedWords(input), expected, input);
});
