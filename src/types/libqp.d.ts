/** The part of libqp (nodemailer's quoted-printable codec, mailparser's dependency) the MX uses. */
declare module 'libqp' {
  export function decode(text: string): Buffer;
  const libqp: { decode: typeof decode };
  export default libqp;
}
