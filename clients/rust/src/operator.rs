//! The operator client: the `/v1/operator/...` endpoints, open only to a token with the
//! `operator` grant (every subject's runs, pending approvals, jobs, usage totals and the
//! approval audit log); any other token gets `FORBIDDEN`. Requests are checked before they
//! are sent (`INVALID_OPERATOR_REQUEST`, `INVALID_APPROVAL`), answers like every other
//! answer (`INVALID_RESPONSE`).
use crate::builder::{sealed, Build, ClientBuilder};
use crate::error::Error;
use crate::generated::operations::{self as ops, Operation};
use crate::transport::{transport_error, ClientConfig, Transport};
use crate::types::*;
use crate::validate;
use serde::{de::DeserializeOwned, Serialize};
use std::sync::Arc;

/// An operator client of one host. Cheap to clone; clones share connections.
#[derive(Clone)]
pub struct AsyncOperatorClient {
    transport: Arc<Transport>,
}

impl sealed::Sealed for AsyncOperatorClient {}
impl Build for AsyncOperatorClient {
    fn build(config: ClientConfig) -> Result<Self, Error> {
        Ok(AsyncOperatorClient { transport: Arc::new(Transport::new(&config)?) })
    }
}

impl AsyncOperatorClient {
    pub fn new(url: &str, token: &str) -> Result<Self, Error> {
        Self::builder(url, token).build()
    }

    pub fn builder(url: &str, token: &str) -> ClientBuilder<Self> {
        ClientBuilder::new(url, token)
    }

    /// `POST v1/operator/runs`: the runs this replica is serving now and the most recently finished ones.
    pub async fn runs(&self, request: &OperatorRunsRequest) -> Result<OperatorRunList, Error> {
        self.call(&ops::OPERATOR_LIST_RUNS, request).await
    }

    /// `POST v1/operator/approvals`: pending approvals of every subject, oldest first.
    pub async fn approvals(&self, request: &OperatorListRequest) -> Result<OperatorApprovalList, Error> {
        self.call(&ops::OPERATOR_LIST_APPROVALS, request).await
    }

    /// `POST v1/operator/approvals/decisions`: decides any subject's pending approval; the
    /// receipt must answer exactly this decision.
    pub async fn decide_approval(&self, decision: &ApprovalDecision) -> Result<ApprovalResolution, Error> {
        validate::approval_decision(&ops::OPERATOR_DECIDE_APPROVAL, decision)?;
        let body = serde_json::to_vec(decision).map_err(transport_error)?;
        let answer = self.transport.post_json(ops::OPERATOR_DECIDE_APPROVAL.path, body).await?;
        Ok(validate::approval_resolution(answer, decision)?)
    }

    /// `POST v1/operator/jobs`: durable jobs of every subject, most recently updated first.
    pub async fn jobs(&self, request: &OperatorJobsRequest) -> Result<OperatorJobList, Error> {
        self.call(&ops::OPERATOR_LIST_JOBS, request).await
    }

    /// `POST v1/operator/usage`: usage totals, optionally grouped.
    pub async fn usage(&self, request: &OperatorUsageRequest) -> Result<OperatorUsage, Error> {
        self.call(&ops::OPERATOR_USAGE, request).await
    }

    /// `POST v1/operator/audit`: one page of the approval audit log, newest first; pass
    /// `next_before` as `before` for the next page.
    pub async fn audit(&self, request: &OperatorAuditRequest) -> Result<OperatorAuditPage, Error> {
        self.call(&ops::OPERATOR_AUDIT, request).await
    }

    async fn call<Q: Serialize, A: DeserializeOwned>(&self, op: &Operation, request: &Q) -> Result<A, Error> {
        validate::request(op, request)?;
        let body = serde_json::to_vec(request).map_err(transport_error)?;
        let answer = self.transport.post_json(op.path, body).await?;
        Ok(validate::operator_answer(answer, op.response)?)
    }
}
