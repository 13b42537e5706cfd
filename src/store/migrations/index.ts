/** Ordered list of schema migrations; each runs once, in its own transaction, at open. */
import * as m001 from './001-initial';
import * as m020 from './020-suppression-nocase';
import * as m030 from './030-mail-lists';
import * as m060 from './060-delivery-claims';
import * as m080 from './080-activity-reports';
import * as m090 from './090-suppression-first';
import * as m100 from './100-mail-list-order';
import * as m110 from './110-test-mode-index';
import * as m120 from './120-recipient-nocase';
import * as m130 from './130-signed-mailboxes';
import * as m140 from './140-server-settings';

export interface Migration { version: number; name: string; sql: string }

export const migrations: Migration[] = [m001, m020, m030, m060, m080, m090, m100, m110, m120, m130, m140];
