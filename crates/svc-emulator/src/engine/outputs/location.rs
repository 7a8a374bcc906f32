//! Where a mission took place (`missionLocationCountry`, `missionLocationRegion`,
//! `missionLocationPlace` of the processing, `missionLocation` of `report.json`), found
//! offline from its positions.
//!
//! - **The position looked up**: the median latitude and the median longitude of the fixes.
//!   Not the first fix (a receiver's first fix can be a cold-start one far off, and a
//!   recording often starts on the way to the site) nor the centroid (a handful of wild
//!   fixes pull it anywhere): half the fixes lie on either side of the median, so it lies
//!   where the mission mostly was, whatever its outliers.
//! - **Country**: the ISO 3166-1 alpha-2 code at that position, from the boundaries of the
//!   `country-boundaries` crate (OpenStreetMap data, ODbL; the 60×30 raster, the smallest
//!   of the three it ships, as precise as the others and only slower per lookup, which is
//!   done once per processing). A territory with a code of its own keeps it (`RE`, `PR`,
//!   `HK`); an exceptionally reserved code (`IC` Canary Islands, `EA` Ceuta and Melilla)
//!   gives way to its country's (`ES`).
//! - **Region**: the ISO 3166-2 subdivision code (`US-TX`, `ES-CT`, `GB-SCT`) where that
//!   data has one: every subdivision of the United States, Canada, Australia, China, India,
//!   Spain, the United Kingdom, Belgium, Bosnia and Herzegovina, Indonesia, and the
//!   autonomous ones of most other countries (Sicily `IT-82`, Madeira `PT-30`, ...).
//!   Elsewhere (France, Germany, Japan, Brazil, ...) it is null: unknown, not guessed.
//! - **Place**: the English name of the nearest city of [`PLACES`] in the same country
//!   within [`PLACE_RADIUS_M`]; null when there is none (open country far from a major
//!   city, or a city across a border).
//! - **At sea** (no country at the position): all three are null. The boundaries ignore sea
//!   borders, so a position just off a coast counts as the coast's country.

use std::sync::OnceLock;

use country_boundaries::{BOUNDARIES_ODBL_60X30, CountryBoundaries, LatLon};

use super::places::PLACES;
use super::trajectory::{Fix, distance_m};

/// How far from a city's centre a mission still counts as at that place.
pub const PLACE_RADIUS_M: f64 = 50_000.0;

/// ISO 3166-1 codes that are only exceptionally reserved: a region within a country,
/// which is then named by its country's own code.
const RESERVED: [&str; 12] = [
    "AC", "CP", "DG", "EA", "EU", "EZ", "FX", "IC", "SU", "TA", "UK", "UN",
];

/// Where a mission took place; a field is `None` when it is not known.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Location {
    pub country: Option<String>,
    pub region: Option<String>,
    pub place: Option<String>,
}

/// The location of the fixes' median position (see the module documentation). The medians
/// are selected in place, without a copy of the positions: the fixes are left in another
/// order.
pub(super) fn mission_location(fixes: &mut [Fix]) -> Location {
    median_position(fixes).map_or_else(Location::default, |(lat, lon)| locate(lat, lon))
}

/// The median latitude and median longitude; longitudes spread over more than half the
/// globe are taken across the antimeridian (0..360) so that a mission around ±180° does
/// not land on the other side of the Earth. Reorders the fixes.
fn median_position(fixes: &mut [Fix]) -> Option<(f64, f64)> {
    let lat = median(fixes, |f| f.lat)?;
    let (min, max) = fixes.iter().fold((f64::MAX, f64::MIN), |(lo, hi), f| {
        (lo.min(f.lon), hi.max(f.lon))
    });
    let across = max - min > 180.0;
    let lon = median(fixes, |f| {
        if across && f.lon < 0.0 {
            f.lon + 360.0
        } else {
            f.lon
        }
    })?;
    Some((lat, if lon > 180.0 { lon - 360.0 } else { lon }))
}

/// The median of `value` over the fixes (the mean of the two middle ones for an even
/// count), selected in place.
fn median(fixes: &mut [Fix], value: impl Fn(&Fix) -> f64) -> Option<f64> {
    let n = fixes.len();
    if n == 0 {
        return None;
    }
    let (below, middle, _) =
        fixes.select_nth_unstable_by(n / 2, |a, b| value(a).total_cmp(&value(b)));
    let upper = value(middle);
    if n % 2 == 1 {
        return Some(upper);
    }
    let lower = below.iter().map(&value).max_by(f64::total_cmp)?;
    Some((lower + upper) / 2.0)
}

/// The embedded boundaries, read once. `None` only if the data shipped in the crate could
/// not be read, which its tests rule out; the locations are then unknown, not a failure.
fn boundaries() -> Option<&'static CountryBoundaries> {
    static BOUNDARIES: OnceLock<Option<CountryBoundaries>> = OnceLock::new();
    BOUNDARIES
        .get_or_init(|| CountryBoundaries::from_reader(BOUNDARIES_ODBL_60X30).ok())
        .as_ref()
}

/// Country, region and place of one position (degrees).
pub fn locate(lat: f64, lon: f64) -> Location {
    let Some(ids) = LatLon::new(lat, lon)
        .ok()
        .and_then(|at| Some(boundaries()?.ids(at)))
    else {
        return Location::default();
    };
    let Some(country) = country_of(&ids) else {
        return Location::default();
    };
    // The ids come smallest area first: the first subdivision of the country is the most
    // precise one.
    let region = ids
        .iter()
        .find(|id| id.split_once('-').is_some_and(|(c, _)| c == country))
        .map(|id| (*id).to_owned());
    let place = PLACES
        .iter()
        .filter(|(_, c, _, _)| *c == country)
        .map(|(name, _, plat, plon)| (name, distance_m((lat, lon), (*plat, *plon))))
        .filter(|(_, d)| *d <= PLACE_RADIUS_M)
        .min_by(|a, b| a.1.total_cmp(&b.1))
        .map(|(name, _)| (*name).to_owned());
    Location {
        country: Some(country.to_owned()),
        region,
        place,
    }
}

/// The most precise ISO 3166-1 alpha-2 code among the ids (smallest area first),
/// skipping the exceptionally reserved ones unless nothing else names the position.
fn country_of<'a>(ids: &[&'a str]) -> Option<&'a str> {
    let mut codes = ids
        .iter()
        .copied()
        .filter(|id| id.len() == 2 && id.bytes().all(|b| b.is_ascii_uppercase()));
    let first = codes.clone().next();
    codes.find(|id| !RESERVED.contains(id)).or(first)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(lat: f64, lon: f64) -> (Option<String>, Option<String>, Option<String>) {
        let l = locate(lat, lon);
        (l.country, l.region, l.place)
    }

    fn known(
        country: &str,
        region: Option<&str>,
        place: Option<&str>,
    ) -> (Option<String>, Option<String>, Option<String>) {
        (
            Some(country.to_owned()),
            region.map(str::to_owned),
            place.map(str::to_owned),
        )
    }

    #[test]
    fn countries_regions_and_places() {
        // Paris, Hôtel de Ville: France has no subdivision in the data.
        assert_eq!(at(48.8566, 2.3522), known("FR", None, Some("Paris")));
        // A state code in the United States.
        assert_eq!(
            at(32.7767, -96.7970),
            known("US", Some("US-TX"), Some("Dallas"))
        );
        assert_eq!(
            at(40.7484, -73.9857),
            known("US", Some("US-NY"), Some("New York"))
        );
        // Shinjuku, 6 km from the centre of Tokyo.
        assert_eq!(at(35.6938, 139.7034), known("JP", None, Some("Tokyo")));
        assert_eq!(at(-23.5614, -46.6559), known("BR", None, Some("São Paulo")));
        assert_eq!(
            at(41.4036, 2.1744),
            known("ES", Some("ES-CT"), Some("Barcelona"))
        );
        assert_eq!(
            at(-33.8568, 151.2153),
            known("AU", Some("AU-NSW"), Some("Sydney"))
        );
    }

    #[test]
    fn at_sea_nothing_is_known() {
        let nothing = (None, None, None);
        assert_eq!(at(30.0, -40.0), nothing, "mid-Atlantic");
        assert_eq!(at(20.0, -140.0), nothing, "North Pacific");
        assert_eq!(at(10.0, 65.0), nothing, "Arabian Sea");
        assert_eq!(at(-60.0, 90.0), nothing, "Southern Ocean");
    }

    #[test]
    fn a_place_only_within_the_radius_and_the_same_country() {
        // The Great Victoria Desert: a state, no city within 50 km.
        assert_eq!(at(-28.0, 127.0), known("AU", Some("AU-WA"), None));
        // 60 km north of Paris: past the radius.
        assert_eq!(at(49.396, 2.352), known("FR", None, None));
        // Annemasse, France, 8 km from Geneva (Switzerland): not "Geneva".
        assert_eq!(at(46.1934, 6.2342), known("FR", None, None));
    }

    #[test]
    fn reserved_codes_give_way_to_the_country() {
        // Gran Canaria: the data says `IC` (exceptionally reserved), then `ES`.
        assert_eq!(
            at(28.10, -15.42),
            known("ES", None, Some("Las Palmas de Gran Canaria"))
        );
        // Réunion keeps its own ISO 3166-1 code.
        assert_eq!(at(-20.90, 55.45), known("RE", None, Some("Saint-Denis")));
        assert_eq!(country_of(&["IC", "ES"]), Some("ES"));
        assert_eq!(country_of(&["ES-CE", "EA", "ES"]), Some("ES"));
        assert_eq!(country_of(&["EA"]), Some("EA"));
        assert_eq!(country_of(&[]), None);
    }

    #[test]
    fn every_place_lies_in_its_country() {
        let boundaries = boundaries().expect("the embedded boundaries data reads");
        let misplaced: Vec<_> = PLACES
            .iter()
            .filter(|(_, country, lat, lon)| {
                let ids = LatLon::new(*lat, *lon).map(|p| boundaries.ids(p));
                country_of(&ids.unwrap_or_default()) != Some(*country)
            })
            .collect();
        assert!(misplaced.is_empty(), "{misplaced:?}");
        assert!(PLACES.len() >= 300, "{}", PLACES.len());
    }

    fn fix(lat: f64, lon: f64) -> Fix {
        Fix::at(lat, lon)
    }

    #[test]
    fn the_median_position_ignores_outliers_and_the_antimeridian() {
        // Two wild fixes in the Atlantic among five in Lyon.
        let mut fixes: Vec<Fix> = (0..5)
            .map(|i| fix(45.76 + 0.001 * f64::from(i), 4.83))
            .collect();
        fixes.insert(0, fix(30.0, -40.0));
        fixes.push(fix(30.0, -40.0));
        let (lat, lon) = median_position(&mut fixes).unwrap();
        assert!((lat - 45.761).abs() < 1e-9 && lon == 4.83, "{lat} {lon}");
        assert_eq!(
            mission_location(&mut fixes),
            Location {
                country: Some("FR".into()),
                region: None,
                place: Some("Lyon".into()),
            }
        );
        // A survey across ±180° in Fiji stays at ±180°, not near 0°.
        let mut fiji = [fix(-16.8, 179.9), fix(-16.8, -179.9), fix(-16.8, 179.95)];
        let (_, lon) = median_position(&mut fiji).unwrap();
        assert!(lon.abs() > 179.0, "{lon}");
        assert_eq!(median_position(&mut []), None);
        assert_eq!(mission_location(&mut []), Location::default());
        // An even count: the mean of the two middle values, whatever the order.
        let mut four = [fix(3.0, 8.0), fix(1.0, 2.0), fix(4.0, 6.0), fix(2.0, 4.0)];
        assert_eq!(median_position(&mut four), Some((2.5, 5.0)));
    }
}
