pub fn attach_configured() {}
pub struct ConfiguredStores;
