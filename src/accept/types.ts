/**
 * The one accept path's contract (DESIGN.md rule 1): both doors turn their input into a
 * Submission and hand it to Accept.submit, which applies every rule of the spec once.
 */
import type { InstanceRow } from '../store/instances';

export interface Recipient { email: string; name?: string | null }

export interface Attachment { filename: string; contentType: string; content: Buffer }

export interface Submission {
  door: 'http' | 'smtp';
  senderEmail: string;
  to: Recipient[];
  cc: Recipient[];
  bcc: Recipient[];
  replyTo: Recipient | null;
  templateId: number | null;
  subject: string | null;
  html: string | null;
  text: string | null;
  headers: Record<string, string>;
  attachments: Attachment[];
  category: string | null;
  testMode: boolean;
  customMsgId: string | null;
  customGroupCode: string | null;
  /**
   * SMTP only: the client's message bytes, with Bcc and every X-Svc-* header already removed.
   * The recipients then come from the envelope (to), and the body is kept as the client sent it.
   */
  raw?: Buffer;
  /** SMTP only: total decoded size of the attachments found by the parser (functional limit). */
  rawAttachmentBytes?: number;
  /** SMTP only: how many attachments the parser found. */
  rawAttachmentCount?: number;
}

export interface AcceptResult { msgId: string; mailIds: string[] }

export interface Accept {
  /** Resolves only once the message bytes are fsync'd and its rows committed; throws ServiceError. */
  submit(instance: InstanceRow, submission: Submission): Promise<AcceptResult>;
}
