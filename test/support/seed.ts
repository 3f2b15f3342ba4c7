import { gradientPng } from './png';
import { call } from './server';

/** Requests agents might send, with enough detail to make a dashboard look like a real day. */
export const SAMPLE_REVIEWS = [
  {
    task_type: 'refund',
    proposed_action: 'Refund order #1042 in full (EUR 250.00) to the original Visa card ending 4242.',
    agent_reasoning: 'The customer reports the parcel never arrived. The carrier (DHL) confirms the loss: "Shipment lost in transit".',
    confidence_score: 0.82,
    urgency: 'high',
    framework: 'langchain',
    agent_id: 7,
    agent_name: 'refund-bot',
    metadata: { order: { id: 1042, total: 250, currency: 'EUR', lines: [{ sku: 'CHAIR-01', qty: 2 }] }, customer: { tier: 'gold', since: '2019-04-01' } },
  },
  {
    task_type: 'db_migration',
    proposed_action: 'ALTER TABLE invoices DROP COLUMN legacy_tax_code;\n-- 1.2M rows, runs in one transaction on the primary',
    agent_reasoning: 'The column has been unused since release 4.2; removing it reclaims 300 MB.',
    confidence_score: 0.64,
    urgency: 'critical',
    framework: 'crewai',
    agent_name: 'schema-bot',
    metadata: { database: 'billing-prod', estimated_lock_seconds: 45 },
  },
  {
    task_type: 'email_send',
    proposed_action: 'Send the November newsletter to 48,213 subscribers in segment "active-eu".',
    confidence_score: 0.97,
    urgency: 'low',
    framework: 'autogen',
    agent_name: 'outreach-agent',
    metadata: { campaign: 'nov-2026' },
  },
  {
    task_type: 'deploy',
    proposed_action: 'Deploy api-gateway v2.14.0 to production (eu-west-1): canary 10% for 30 minutes, then full rollout.',
    confidence_score: 0.9,
    urgency: 'medium',
    framework: 'langchain',
    agent_name: 'release-agent',
    metadata: { change_ticket: 'CHG-8812', tests: { passed: 1423, failed: 0 } },
  },
  {
    task_type: 'access_grant',
    proposed_action: 'Grant m.rossi@example.com the "billing-admin" role in the finance workspace for 7 days.',
    agent_reasoning: 'Requested in ticket IT-3321 by the finance lead for the quarter close.',
    confidence_score: 0.73,
    urgency: 'high',
    framework: 'crewai',
    agent_name: 'it-helpdesk',
  },
] as const;

async function post(baseUrl: string, path: string, body: unknown): Promise<any> {
  const response = await fetch(`${baseUrl}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return response.json();
}

export async function attach(
  baseUrl: string,
  reviewId: number,
  content: Buffer | string,
  fileName: string,
  type: string,
  description?: string,
  headers: Record<string, string> = {},
): Promise<any> {
  const form = new FormData();
  form.append('file', new Blob([typeof content === 'string' ? content : new Uint8Array(content)], { type }), fileName);
  if (description) form.append('description', description);
  return (await fetch(`${baseUrl}/reviews/${reviewId}/attachments`, { method: 'POST', body: form, headers })).json();
}

/** A minimal one-page PDF. */
export function onePagePdf(text: string): Buffer {
  const stream = `BT /F1 18 Tf 40 100 Td (${text}) Tj ET`;
  const objects = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 300 200] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>',
    `<< /Length ${stream.length} >>\nstream\n${stream}\nendstream`,
    '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>',
  ];
  let pdf = '%PDF-1.4\n';
  const offsets: number[] = [];
  objects.forEach((object, i) => {
    offsets.push(pdf.length);
    pdf += `${i + 1} 0 obj\n${object}\nendobj\n`;
  });
  const xref = pdf.length;
  pdf += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n${offsets.map((o) => `${String(o).padStart(10, '0')} 00000 n \n`).join('')}`;
  pdf += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(pdf, 'latin1');
}

/** The sample reviews, two of them decided, with feedback and attachments on the refund. */
export async function seedSampleReviews(baseUrl: string): Promise<number[]> {
  const ids: number[] = [];
  for (const review of SAMPLE_REVIEWS) ids.push((await post(baseUrl, '/reviews', review)).id);
  await post(baseUrl, `/reviews/${ids[2]}/decide`, { decision_type: 'approve', reviewer_name: 'dana@example.com', notes: 'Segment checked.' });
  await post(baseUrl, `/reviews/${ids[3]}/decide`, {
    decision_type: 'modify',
    modified_action: 'Deploy api-gateway v2.14.0 to production (eu-west-1): canary 5% for 2 hours, then full rollout.',
    reviewer_name: 'sam@example.com',
    notes: 'Longer canary during the sale.',
  });
  await post(baseUrl, `/reviews/${ids[0]}/feedback`, { rating: 4, comment: 'Good evidence gathered by the agent.' });
  await attach(baseUrl, ids[0], gradientPng(), 'parcel-photo.png', 'image/png', 'Photo of the empty parcel box');
  await attach(baseUrl, ids[0], 'DHL tracking 0034 1234 5678\n2026-11-18 09:12 Picked up\n2026-11-19 17:40 Shipment lost in transit\n', 'tracking.txt', 'text/plain');
  await attach(baseUrl, ids[0], onePagePdf('Invoice 1042 - EUR 250.00'), 'invoice-1042.pdf', 'application/pdf');
  return ids;
}

/**
 * A person the organization's admin key invites, signed in through their invitation link: their
 * id, and the headers their dashboard session sends (cookie and CSRF token).
 */
export async function signedInPerson(
  baseUrl: string,
  adminKey: string,
  person: { email: string; name: string; role: 'admin' | 'reviewer' | 'viewer' },
): Promise<{ id: number; headers: Record<string, string> }> {
  const invited = await call(baseUrl, 'POST', '/users', person, { headers: { authorization: `Bearer ${adminKey}` } });
  if (invited.status !== 201) throw new Error(`inviting ${person.email}: ${JSON.stringify(invited.body)}`);
  const token = new URL(invited.body.invitation_url).hash.replace('#/invitation/', '');
  const accepted = await call(baseUrl, 'POST', '/invitations/accept', { token, password: 'a long enough passphrase' });
  if (accepted.status !== 201) throw new Error(`signing ${person.email} in: ${JSON.stringify(accepted.body)}`);
  return { id: invited.body.id, headers: { cookie: (accepted.headers.get('set-cookie') ?? '').split(';')[0], 'x-csrf-token': accepted.body.csrf_token } };
}
