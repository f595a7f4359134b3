/** The approval audit trail: every request, decision and rejected decision, who and when. */

export interface AuditRecord {
  kind: 'approval.requested' | 'approval.resolved' | 'approval.rejected';
  at: string;
  subject: string;
  /** The token that made the decision (resolved/rejected by a decision). */
  tokenId?: string;
  /** The operator token's subject, when an operator decided (`/v1/operator/approvals/decisions`). */
  operator?: string;
  approvalId?: string;
  runId?: string;
  provider?: string;
  tool?: string;
  /**
   * The resolution outcome, for `approval.resolved`. `interrupted`: the host stopped
   * (crashed) while the approval was pending; recorded at the next start.
   */
  outcome?: 'approved' | 'denied' | 'cancelled' | 'expired' | 'interrupted';
  /** The error code, for `approval.rejected`. */
  code?: string;
}
