//! Lists narrowed by name and metadata ([`ListFilter`]): the service lists a whole
//! organization, page after page; the filter keeps what matches as the pages come.

use futures::{StreamExt as _, stream::BoxStream};

use super::{CloudClient, CloudError, Container, Metadata, Processing};

/// What a listed processing or container must have to be kept: every condition given
/// holds. The default keeps everything.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ListFilter {
    /// The processing's name, exactly (containers have none: a filter with a name keeps
    /// no container).
    pub name: Option<String>,
    /// Metadata entries the item must carry, each with exactly this value.
    pub metadata: Metadata,
}

impl ListFilter {
    /// A filter on one metadata entry.
    #[must_use]
    pub fn metadata(key: impl Into<String>, value: impl Into<String>) -> Self {
        Self {
            name: None,
            metadata: Metadata::from_iter([(key.into(), value.into())]),
        }
    }

    /// Whether an item of this name and metadata is kept.
    #[must_use]
    pub fn matches(&self, name: Option<&str>, metadata: Option<&Metadata>) -> bool {
        if let Some(wanted) = &self.name
            && name != Some(wanted.as_str())
        {
            return false;
        }
        self.metadata.iter().all(|(key, value)| {
            metadata
                .and_then(|m| m.get(key))
                .is_some_and(|v| v == value)
        })
    }
}

impl CloudClient {
    /// The organization's processings that `filter` keeps, page after page as the
    /// stream is read.
    ///
    /// # Errors
    /// As [`CloudClient::list_processings`].
    pub fn list_processings_matching(
        &self,
        filter: ListFilter,
    ) -> BoxStream<'static, Result<Processing, CloudError>> {
        self.list_processings()
            .filter(move |item| {
                std::future::ready(match item {
                    Ok(p) => filter.matches(p.name.as_deref(), p.metadata.as_ref()),
                    Err(_) => true,
                })
            })
            .boxed()
    }

    /// The organization's containers that `filter` keeps, page after page as the
    /// stream is read.
    ///
    /// # Errors
    /// As [`CloudClient::list_containers`].
    pub fn list_containers_matching(
        &self,
        filter: ListFilter,
    ) -> BoxStream<'static, Result<Container, CloudError>> {
        self.list_containers()
            .filter(move |item| {
                std::future::ready(match item {
                    Ok(c) => filter.matches(None, c.metadata.as_ref()),
                    Err(_) => true,
                })
            })
            .boxed()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_condition_must_hold() {
        let meta = Metadata::from_iter([("site".to_owned(), "north".to_owned())]);
        assert!(ListFilter::default().matches(None, None));
        assert!(ListFilter::metadata("site", "north").matches(Some("a"), Some(&meta)));
        assert!(!ListFilter::metadata("site", "south").matches(Some("a"), Some(&meta)));
        assert!(!ListFilter::metadata("site", "north").matches(Some("a"), None));
        let named = ListFilter {
            name: Some("a".to_owned()),
            ..ListFilter::metadata("site", "north")
        };
        assert!(named.matches(Some("a"), Some(&meta)));
        assert!(!named.matches(Some("b"), Some(&meta)));
        assert!(!named.matches(None, Some(&meta)));
    }
}
