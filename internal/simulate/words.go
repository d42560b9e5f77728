package simulate

// Word lists for people and places. They are small on purpose: enough
// variety that two simulated users rarely look alike.

var firstNames = []string{
	"James", "Mary", "Michael", "Patricia", "Robert", "Jennifer", "John", "Linda", "David", "Elizabeth",
	"William", "Barbara", "Richard", "Susan", "Joseph", "Jessica", "Thomas", "Sarah", "Christopher", "Karen",
	"Daniel", "Lisa", "Matthew", "Nancy", "Anthony", "Sandra", "Mark", "Ashley", "Steven", "Emily",
	"Andrew", "Michelle", "Joshua", "Amanda", "Kevin", "Melissa", "Brian", "Stephanie", "Jordan", "Rebecca",
	"Tyler", "Laura", "Aaron", "Hannah", "Jose", "Maria", "Carlos", "Sofia", "Wei", "Priya",
	"Andre", "Aaliyah", "Marcus", "Jasmine", "Ethan", "Olivia", "Noah", "Emma", "Liam", "Ava",
	"Diego", "Camila", "Hiroshi", "Mei", "Omar", "Fatima", "Luis", "Gabriela", "Connor", "Madison",
}

var lastNames = []string{
	"Smith", "Johnson", "Williams", "Brown", "Jones", "Garcia", "Miller", "Davis", "Rodriguez", "Martinez",
	"Hernandez", "Lopez", "Gonzalez", "Wilson", "Anderson", "Thomas", "Taylor", "Moore", "Jackson", "Martin",
	"Lee", "Perez", "Thompson", "White", "Harris", "Sanchez", "Clark", "Ramirez", "Lewis", "Robinson",
	"Walker", "Young", "Allen", "King", "Wright", "Scott", "Torres", "Nguyen", "Hill", "Flores",
	"Green", "Adams", "Nelson", "Baker", "Hall", "Rivera", "Campbell", "Mitchell", "Carter", "Roberts",
	"Chen", "Patel", "Kim", "Singh", "Okafor", "Murphy", "Sullivan", "Brooks", "Reyes", "Bennett",
}

var streetNames = []string{
	"Maple Ave", "Oak St", "Pine St", "Cedar Ln", "Elm St", "Washington Ave", "Lake Dr", "Hillcrest Rd",
	"Park Ave", "Sunset Blvd", "Main St", "Church St", "Highland Ave", "Meadow Ln", "Forest Dr",
	"Willow Way", "Lincoln Ave", "Jefferson St", "River Rd", "Spring St", "Birch Ct", "Magnolia Dr",
	"Chestnut St", "Sycamore Ave", "Walnut St", "Valley View Rd", "Ridge Rd", "Franklin St", "Grove St",
	"Aspen Ct", "Juniper Dr", "Laurel Ave", "Mill Rd", "Orchard Ln", "Prospect Ave", "Summit Ave",
}

var unitFormats = []string{"Apt %d", "Apt %dB", "Unit %d", "Suite %d", "#%d"}

// city is a place people live: the first three digits of its ZIP codes, its
// standard UTC offset, and the combined sales tax rate in basis points.
type city struct {
	name, region, zip3 string
	utcOffset          int
	taxBP              int64
	digitalTax         bool // whether the state taxes streaming and software
}

var cities = []city{
	{"Austin", "TX", "787", -6, 825, true},
	{"Houston", "TX", "770", -6, 825, true},
	{"Dallas", "TX", "752", -6, 825, true},
	{"San Antonio", "TX", "782", -6, 825, true},
	{"Los Angeles", "CA", "900", -8, 950, false},
	{"San Diego", "CA", "921", -8, 775, false},
	{"San Jose", "CA", "951", -8, 938, false},
	{"Sacramento", "CA", "958", -8, 875, false},
	{"Seattle", "WA", "981", -8, 1035, true},
	{"Spokane", "WA", "992", -8, 910, true},
	{"Portland", "OR", "972", -8, 0, false},
	{"Denver", "CO", "802", -7, 881, false},
	{"Phoenix", "AZ", "850", -7, 860, true},
	{"Tucson", "AZ", "857", -7, 870, true},
	{"Salt Lake City", "UT", "841", -7, 775, true},
	{"Chicago", "IL", "606", -6, 1025, true},
	{"Minneapolis", "MN", "554", -6, 903, true},
	{"Kansas City", "MO", "641", -6, 886, false},
	{"Nashville", "TN", "372", -6, 925, true},
	{"New Orleans", "LA", "701", -6, 945, false},
	{"Atlanta", "GA", "303", -5, 890, false},
	{"Miami", "FL", "331", -5, 700, false},
	{"Orlando", "FL", "328", -5, 650, false},
	{"Tampa", "FL", "336", -5, 750, false},
	{"Charlotte", "NC", "282", -5, 725, true},
	{"Raleigh", "NC", "276", -5, 725, true},
	{"Columbus", "OH", "432", -5, 750, true},
	{"Cleveland", "OH", "441", -5, 800, true},
	{"Detroit", "MI", "482", -5, 600, false},
	{"Pittsburgh", "PA", "152", -5, 700, true},
	{"Philadelphia", "PA", "191", -5, 800, true},
	{"New York", "NY", "100", -5, 888, true},
	{"Brooklyn", "NY", "112", -5, 888, true},
	{"Boston", "MA", "021", -5, 625, false},
	{"Providence", "RI", "029", -5, 700, true},
	{"Baltimore", "MD", "212", -5, 600, true},
	{"Arlington", "VA", "222", -5, 600, false},
	{"Wilmington", "DE", "198", -5, 0, false},
	{"Manchester", "NH", "031", -5, 0, false},
	{"Madison", "WI", "537", -6, 550, true},
}

// card brands with their share of cards in a wallet.
var cardBrands = []choice[string]{
	{"VISA", 45}, {"MASTERCARD", 30}, {"AMEX", 15}, {"DISCOVER", 10},
}

// cardNicknames are the names merchants show for a saved card, by brand.
var cardNicknames = map[string][]string{
	"VISA":       {"Chase Sapphire Preferred", "Chase Freedom Unlimited", "Capital One Venture", "Wells Fargo Active Cash", "Bank of America Cash Rewards"},
	"MASTERCARD": {"Citi Double Cash", "Apple Card", "Capital One Quicksilver", "World Elite Mastercard"},
	"AMEX":       {"Amex Gold Card", "Blue Cash Preferred", "The Platinum Card", "Delta SkyMiles Gold"},
	"DISCOVER":   {"Discover it Cash Back", "Discover it Miles"},
}

// marketplaceSellers are third-party sellers on general marketplaces.
var marketplaceSellers = []string{
	"Anker Direct", "Sunlit Home Goods", "TechWorld Outlet", "Bluewater Trading Co.", "Northpeak Supply",
	"Evergreen Essentials", "Urban Nest Store", "BrightLeaf Retail", "Summit Gear Co.", "Harbor & Hearth",
	"PixelPro Electronics", "Golden Gate Deals", "Prairie Wind Goods", "Cascade Outfitters", "Maple & Main Market",
	"Lumen Lighting Shop", "Silver Fox Books", "KidsJoy Toys", "Pure Path Wellness", "Coastal Kitchen Co.",
}

// etsyShops are handmade sellers.
var etsyShops = []string{
	"WillowAndPineCo", "ClayMoonStudio", "TheLinenLoft", "FoxgloveFinds", "IronAndOakGoods",
	"PaperMeadowPress", "LittleBirchKnits", "SaltwaterSoapCo", "GildedThistle", "QuietHarborCandles",
	"WanderlustPrints", "HoneycombHome", "NorthStarLeather", "BloomAndBranch", "CopperKettleCrafts",
}
