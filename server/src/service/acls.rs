//! The ACL APIs (CreateAcls, ListAcls, DropAcls): wire forms to and from the authorizer
//! (`crate::authz`), answered as Fluss's `CoordinatorService` / `RpcServiceBase` do.

use riverlet::acl::{AclBinding, AclFilter};
use riverlet::error::codes as error_codes;
use riverlet::proto::*;
use riverlet::Result;

use super::{fluss, Server};
use crate::authz::Session;

/// An ACL or filter the server cannot take: UNKNOWN_SERVER_ERROR, as Fluss answers the
/// IllegalArgumentException of an unknown code (the message names the bad value).
fn bad_acl(e: riverlet::Error) -> riverlet::Error {
    fluss(error_codes::UNKNOWN_SERVER_ERROR, e.message().to_string())
}

impl Server {
    pub(super) fn create_acls(
        &self,
        session: &Session,
        r: CreateAclsRequest,
    ) -> Result<CreateAclsResponse> {
        let bindings = r
            .acl
            .iter()
            .map(AclBinding::from_proto)
            .collect::<Result<Vec<_>>>()
            .map_err(bad_acl)?;
        let results = self.authz.create(session, bindings)?;
        Ok(CreateAclsResponse {
            acl_res: r
                .acl
                .into_iter()
                .zip(results)
                .map(|(acl, res)| match res {
                    Ok(()) => PbCreateAclRespInfo {
                        acl,
                        error_code: Some(error_codes::NONE),
                        error_message: None,
                    },
                    Err(e) => PbCreateAclRespInfo {
                        acl,
                        error_code: Some(
                            e.fluss_code().unwrap_or(error_codes::UNKNOWN_SERVER_ERROR),
                        ),
                        error_message: Some(e.message().to_string()),
                    },
                })
                .collect(),
        })
    }

    pub(super) fn list_acls(
        &self,
        session: &Session,
        r: ListAclsRequest,
    ) -> Result<ListAclsResponse> {
        let filter = AclFilter::from_proto(&r.acl_filter).map_err(bad_acl)?;
        Ok(ListAclsResponse {
            acl: self
                .authz
                .list(session, &filter)?
                .iter()
                .map(AclBinding::to_proto)
                .collect(),
        })
    }

    pub(super) fn drop_acls(
        &self,
        session: &Session,
        r: DropAclsRequest,
    ) -> Result<DropAclsResponse> {
        let filters = r
            .acl_filter
            .iter()
            .map(AclFilter::from_proto)
            .collect::<Result<Vec<_>>>()
            .map_err(bad_acl)?;
        let removed = self.authz.drop(session, &filters)?;
        Ok(DropAclsResponse {
            filter_results: removed
                .into_iter()
                .map(|bindings| PbDropAclsFilterResult {
                    matching_acls: bindings
                        .iter()
                        .map(|b| PbDropAclsMatchingAcl {
                            acl: b.to_proto(),
                            error_code: None,
                            error_message: None,
                        })
                        .collect(),
                    error_code: None,
                    error_message: None,
                })
                .collect(),
        })
    }
}
