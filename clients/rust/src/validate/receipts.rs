//! Receipts must answer exactly what was submitted; a mismatch means the application
//! has to reconcile (never retry blindly).
use super::decode;
use crate::error::{codes, DriverError};
use crate::generated::checks as schema;
use crate::types::*;
use serde_json::Value;

fn mismatch(what: &str, e: String) -> DriverError {
    DriverError::new(codes::INVALID_RESPONSE, format!("{what}: {e}; reconcile before acting again, do not retry"))
}

pub fn approval_resolution(value: Value, decision: &ApprovalDecision) -> Result<ApprovalResolution, DriverError> {
    let bad = |e| mismatch("approval receipt", e);
    schema::approval_resolution(&value, "").map_err(bad)?;
    let receipt: ApprovalResolution = decode::typed(value).map_err(bad)?;
    if receipt.approval_id != decision.approval_id || receipt.run_id != decision.run_id || receipt.call_id != decision.call.id {
        return Err(bad("it names another approval, run or call".into()));
    }
    if receipt.outcome != decision.decision.outcome() {
        return Err(bad(format!("outcome {:?} does not follow the decision {:?}", receipt.outcome, decision.decision)));
    }
    Ok(receipt)
}

pub fn tool_receipt(value: Value, identity: &ToolExecutionIdentity, status: ReceiptStatus) -> Result<ToolExecutionReceipt, DriverError> {
    let bad = |e| mismatch("tool execution receipt", e);
    schema::tool_execution_receipt(&value, "").map_err(bad)?;
    let receipt: ToolExecutionReceipt = decode::typed(value).map_err(bad)?;
    let echoed = ToolExecutionIdentity {
        execution_id: receipt.execution_id.clone(),
        run_id: receipt.run_id.clone(),
        call_id: receipt.call_id.clone(),
    };
    if echoed != *identity {
        return Err(bad("it names another execution, run or call".into()));
    }
    if receipt.status != status {
        return Err(bad(format!("status {:?}, expected {status:?}", receipt.status)));
    }
    Ok(receipt)
}
